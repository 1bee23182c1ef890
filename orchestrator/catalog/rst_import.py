"""Import a published "Docker image components" list-table (reStructuredText) into
catalog entries. Pure: text in, entries / YAML text / a change report out.

The table looks like the one of ``seeds/rocm-pytorch-compatibility.rst``: one
row per image, the first column a link to the image's page (the digest is in
the URL, ``.../layers/<namespace>/<repo>/<tag>/images/sha256-<hex>``), then one
column per component. Tolerated variants: header names in any case
("TensorBoard", "OMPI", "Open MPI"), "Ubuntu" or "Linux" for the distro column
(a "Linux" cell says "Ubuntu 22.04"), bold / emphasis / literals, links
(`` `2.4.0 <url>`_ ``), roles (``:sup:`1``` footnote marks are dropped),
substitutions (``|docker-icon|``), ``.. raw:: html`` cells, and a plain
``repo/name:tag`` cell instead of a link.

This module merges what ``rst_page`` read into a catalog file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from itertools import takewhile
from typing import Any

import yaml

from ..spec import Change
from . import rst_cells as cells
from .rst_page import PageRead, read_page
from .rst_table import ENTRY_KEYS, RstImportError


@dataclass(frozen=True)
class Merge:
    entries: tuple[dict[str, Any], ...]
    changes: tuple[Change, ...] = field(default=())

    @property
    def changed(self) -> bool:
        return any(c.kind in ("added", "changed") for c in self.changes)

    def count(self, kind: str) -> int:
        return sum(c.kind == kind for c in self.changes)


def _details(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key in ENTRY_KEYS[1:]:
        if key == "components":
            a, b = old.get(key) or {}, new.get(key) or {}
            for k in list(a) + [k for k in b if k not in a]:
                if str(a.get(k)) != str(b.get(k)) or (k in a) != (k in b):
                    out.append(f"components.{k}: {a.get(k, '-')} → {b.get(k, '-')}")
        elif key in new and old.get(key) != new.get(key):
            out.append(f"{key}: {old.get(key, '-')} → {new[key]}")
    return out


def merge(existing: list[dict[str, Any]], imported: list[dict[str, Any]]) -> Merge:
    """Imported entries replace the catalogued ones with the same alias (or reference);
    other catalogued entries are kept; keys the table does not know (notes ...) survive."""
    result = [dict(e) for e in existing]
    changes: list[Change] = []
    for new in imported:
        idx = next(
            (i for k in ("alias", "reference") for i, e in enumerate(result) if e.get(k) == new[k]),
            None,
        )
        if idx is None:
            result.append(dict(new))
            changes.append(Change("added", new["alias"]))
            continue
        old = result[idx]
        comps_old = {str(k): str(v) for k, v in (old.get("components") or {}).items()}
        details = _details({**old, "components": comps_old}, new)
        if old.get("alias") != new["alias"]:
            details.insert(0, f"alias: {old.get('alias')} → {new['alias']}")
        if details:
            merged = {k: v for k, v in old.items() if k not in ENTRY_KEYS}
            result[idx] = {**{k: new[k] for k in ENTRY_KEYS if k in new}, **merged}
            changes.append(Change("changed", new["alias"], details=tuple(details)))
        else:
            changes.append(Change("unchanged", new["alias"]))
    touched = {c.subject for c in changes}
    for e in existing:
        if e.get("alias") not in touched and not any(
            e.get("reference") == n["reference"] for n in imported
        ):
            changes.append(Change("kept", str(e.get("alias"))))
    return Merge(tuple(result), tuple(changes))


def _scalar(value: Any) -> str:
    if (
        isinstance(value, str)
        and re.fullmatch(r"[A-Za-z][A-Za-z0-9 _./:()-]*", value)
        and yaml.safe_load(value) == value
    ):
        return value
    if isinstance(value, (str, int, float, bool)) or value is None:
        return json.dumps(value)
    return yaml.safe_dump(value, default_flow_style=True, width=1000).strip()


def render_yaml(
    entries: list[dict[str, Any]] | tuple[dict[str, Any], ...],
    *,
    family: str,
    backend: str,
    head: dict[str, Any] | None = None,
    comment: str = "",
) -> str:
    """The catalog file, in the style of images/*.yaml (versions always quoted)."""
    lines = [("# " + line if line else "#") for line in comment.splitlines()] if comment else []
    lines += [f"family: {family}", f"backend: {backend}"]
    lines += [
        f"{k}: {_scalar(v)}"
        for k, v in (head or {}).items()
        if k not in ("family", "backend", "images")
    ]
    lines.append("images:")
    for e in entries:
        keys = [k for k in ENTRY_KEYS if k in e] + [k for k in e if k not in ENTRY_KEYS]
        for n, key in enumerate(keys):
            prefix = "  - " if n == 0 else "    "
            if key == "components":
                lines.append(f"{prefix}components:")
                lines += [f"      {k}: {json.dumps(str(v))}" for k, v in e[key].items()]
            elif key == "digest":
                lines.append(f"{prefix}digest: {json.dumps(e[key])}")
            else:
                lines.append(f"{prefix}{key}: {_scalar(e[key])}")
    return "\n".join(lines) + "\n"


def leading_comment(text: str) -> str:
    """The comment block at the top of an existing catalog file (kept on rewrite)."""
    block = takewhile(lambda line: line.startswith("#"), text.splitlines())
    return "\n".join(line[1:].removeprefix(" ") for line in block)


@dataclass(frozen=True)
class Plan:
    """What importing a table into a catalog file would do."""

    imported: int
    merge: Merge
    text: str  # the catalog file after the import
    changed: bool  # the file's text differs (or it does not exist yet)
    page: PageRead | None = None

    def report(self, out: str, written: bool) -> dict[str, Any]:
        return {
            "out": out,
            "imported": self.imported,
            "changed": self.changed,
            "written": written,
            "counts": {k: self.merge.count(k) for k in ("added", "changed", "unchanged", "kept")},
            "changes": [
                {"alias": c.subject, "kind": c.kind, "details": list(c.details)}
                for c in self.merge.changes
            ],
            **({"import": self.page.report()} if self.page is not None else {}),
        }


def plan_import(
    rst_text: str,
    existing: str | None,
    source: str = "<rst>",
    target: str = "<catalog>",
    defs: cells.Defs | None = None,
) -> Plan:
    """Parse the table, merge it into the existing catalog file's text (or none), render."""
    page = read_page(rst_text, source, defs)
    head: dict[str, Any]
    old_entries: list[dict[str, Any]] = []
    if existing is not None:
        try:
            doc = yaml.safe_load(existing) or {}
        except yaml.YAMLError as exc:
            raise RstImportError(f"{target}: invalid YAML: {exc}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("images", []), list):
            raise RstImportError(f"{target}: not an image catalog file (family, backend, images)")
        head = {k: v for k, v in doc.items() if k != "images"}
        old_entries = list(doc.get("images") or [])
        comment = leading_comment(existing)
    else:
        backends = sorted({i.backend for i in page.images})
        backend = backends[0]  # every image has evidence of its own; the head names the first
        head = {"family": backend, "backend": backend}
        comment = (
            f"Imported from {source.rsplit('/', 1)[-1]} by valorch images import-rst.\n"
            'Components are the expectations valorch verifies inside the image; "master" means unpinned.'
        )
    # the page's entries (one per image), each naming its backend where the head says another
    entries = [
        e if i.backend == str(head.get("backend", "")) else {**e, "backend": i.backend}
        for e, i in zip(page.entries, page.images, strict=True)
    ]
    merged = merge(old_entries, entries)
    if existing is not None and not merged.changed:
        return Plan(len(entries), merged, existing, False, page)
    text = render_yaml(
        merged.entries,
        family=str(head.get("family", "rocm")),
        backend=str(head.get("backend", "rocm")),
        head=head,
        comment=comment,
    )
    return Plan(len(entries), merged, text, existing is None or text != existing, page)
