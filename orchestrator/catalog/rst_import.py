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

This module holds the table and cell primitives and the merge into a catalog file; a page
is read whole (backend evidence, versions, labels, the report) in ``rst_page``, and what a
cell says (a version, a label, a role to resolve) in ``rst_cells``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import yaml

from ..spec import Change
from . import rst_cells as cells

if TYPE_CHECKING:
    from .rst_page import PageRead

# header text (normalized) -> catalog component key; None marks the image column
HEADERS: dict[str, str | None] = {
    "docker": None,
    "docker image": None,
    "docker images": None,
    "image": None,
    "tag": None,
    "docker tag": None,
    "pytorch": "pytorch",
    "torch": "pytorch",
    "ubuntu": "ubuntu",
    "linux": "linux",
    "os": "linux",
    "operating system": "linux",
    "distro": "linux",
    "python": "python",
    "apex": "apex",
    "torchvision": "torchvision",
    "torchaudio": "torchaudio",
    "tensorboard": "tensorboard",
    "magma": "magma",
    "ucx": "ucx",
    "ompi": "ompi",
    "open mpi": "ompi",
    "openmpi": "ompi",
    "mpi": "ompi",
    "ofed": "ofed",
    "mlnx ofed": "ofed",
    "rocm": "rocm",
    "cuda": "cuda",
    "cudnn": "cudnn",
    "nccl": "nccl",
    "rccl": "rccl",
    "tensorflow": "tensorflow",
    "triton": "triton",
    "numpy": "numpy",
    "debian": "debian",
}
_LAYER_URL = re.compile(
    r"/layers/(?P<ns>[^/\s\"']+)/(?P<repo>[^/\s\"']+)/(?P<tag>[^/\s\"']+)"
    r"/images/sha256-(?P<hex>[0-9A-Za-z]*)"
)
_HEX64 = re.compile(r"[0-9a-f]{64}")
# a digest as written: what follows "sha256-" (a layer link) or "sha256:" (a reference)
_WRITTEN_DIGEST = re.compile(r"sha256[-:](?P<hex>[0-9A-Za-z]*)")
# Linear time: a match starts only where a run of name characters starts (a \b start inside
# "a.a.a…" rescanned the rest of the run from every dot: quadratic on a long cell).
_REF = re.compile(
    r"(?<![\w.-])[._-]*(?P<ref>[a-z0-9][a-z0-9._-]*/[a-z0-9][a-z0-9._-]*:[A-Za-z0-9][A-Za-z0-9._-]*)"
    r"(?:@(?P<digest>sha256:[0-9a-f]{64})(?![0-9A-Za-z]))?"
)
# Linear time: neither group crosses a backtick (a lazy text then \s* was quadratic on spaces)
_LINK = re.compile(r"`([^`<]*)<([^>`]*)>`__?")
_ROLE = re.compile(r":(?P<role>[a-z-]+):`(?P<text>[^`]*)`")
_DISTROS = ("ubuntu", "debian", "rhel", "centos", "sles", "rocky", "almalinux", "azurelinux")
ENTRY_KEYS = ("alias", "reference", "backend", "digest", "os", "components", "labels")
_KNOWN = frozenset(v for v in HEADERS.values() if v)


class RstImportError(ValueError):
    """The text holds no usable components table (the CLI turns it into exit 2)."""


@dataclass(frozen=True)
class ListTable:
    title: str
    line: int  # 1-based line of the directive
    header_rows: int
    rows: tuple[tuple[str, ...], ...]  # raw cell text
    cell_lines: tuple[tuple[int, ...], ...] = ()  # 1-based line where each cell starts


@dataclass(frozen=True)
class Merge:
    entries: tuple[dict[str, Any], ...]
    changes: tuple[Change, ...] = field(default=())

    @property
    def changed(self) -> bool:
        return any(c.kind in ("added", "changed") for c in self.changes)

    def count(self, kind: str) -> int:
        return sum(c.kind == kind for c in self.changes)


# ---------------------------------------------------------------- parsing ---


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def list_tables(text: str) -> list[ListTable]:
    """Every ``.. list-table::`` of a document, cells as raw text."""
    lines = text.expandtabs(4).splitlines()
    tables: list[ListTable] = []
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)\.\.\s+list-table::\s*(.*)$", lines[i])
        if not m:
            i += 1
            continue
        base, title, start = len(m.group(1)), m.group(2).strip(), i
        header_rows = 0
        i += 1
        block: list[tuple[int, str]] = []
        while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > base):
            block.append((i + 1, lines[i]))
            i += 1
        rows: list[list[str]] = []
        starts: list[list[int]] = []
        cell: list[str] | None = None
        cell_col = -1
        for lineno, line in block:
            s = line.strip()
            hr = re.match(r"^:header-rows:\s*(\d+)", s)
            if hr and not rows:
                if (
                    len(hr.group(1)) > 4
                ):  # int() of 5000 digits raises; no table has 10**4 header rows
                    raise RstImportError(f"line {lineno}: :header-rows: is not a count of rows")
                header_rows = int(hr.group(1))
                continue
            if s.startswith(":") and not rows:
                continue  # another directive option (:class:, :widths: ...)
            row_m = re.match(r"^(\s*)\*\s+-(\s+|$)(.*)$", line)
            cell_m = re.match(r"^(\s*)-(\s+|$)(.*)$", line)
            if row_m:
                rows.append([])
                starts.append([])
                cell_col = line.index("-", len(row_m.group(1)))  # `* -` or `*   -`
                cell = [row_m.group(3)]
                rows[-1].append("")
                starts[-1].append(lineno)
            elif cell_m and rows and len(cell_m.group(1)) == cell_col:
                cell = [cell_m.group(3)]
                rows[-1].append("")
                starts[-1].append(lineno)
            elif cell is not None:
                cell.append(line.strip())
            else:
                continue
            rows[-1][-1] = "\n".join(cell).strip()
        tables.append(
            ListTable(
                title,
                start + 1,
                header_rows,
                tuple(tuple(r) for r in rows),
                tuple(tuple(c) for c in starts),
            )
        )
    return tables


def clean(cell: str) -> str:
    """Cell text without markup: links keep their text, footnote marks go."""
    text = re.sub(r"\.\.\s+raw::\s*html.*", "", cell, flags=re.S)
    text = _LINK.sub(lambda m: m.group(1).strip() or m.group(2), text)
    text = _ROLE.sub(lambda m: "" if m.group("role") in ("sup", "sub") else m.group("text"), text)
    text = re.sub(
        r"\*\*(.+?)\*\*|\*(.+?)\*|``(.+?)``", lambda m: next(g for g in m.groups() if g), text
    )
    text = re.sub(r"\|[^|\s][^|]*\|", "", text)  # substitutions (icons)
    text = re.sub(r"\[\d+\]_|\[#\w*\]_", "", text)  # footnote references
    return " ".join(text.split()).strip()


def header_key(text: str) -> str | None:
    norm = " ".join(re.sub(r"[^a-z0-9. ]+", " ", clean(text).lower()).split())
    norm = re.sub(r"\s+versions?$", "", norm)
    if norm in HEADERS:
        return HEADERS[norm]
    if re.search(r"\bdocker(?: images?)?$", norm):
        return None  # one of several image columns ("Full Docker", "Server Docker")
    return re.sub(r"[^a-z0-9]+", "_", norm).strip("_") or "column"


def image_of(cell: str) -> tuple[str, str | None] | None:
    """(reference, digest) from an image cell: a layer URL, or a plain reference."""
    m = _LAYER_URL.search(cell)
    if m:
        ns, repo = m.group("ns"), m.group("repo")
        name = repo if ns == "_" else f"{ns}/{repo}"
        digest = m.group("hex")  # one that is not 64 hex digits is no digest (bad_digest)
        return f"{name}:{m.group('tag')}", "sha256:" + digest if _HEX64.fullmatch(digest) else None
    m = _REF.search(re.sub(r"<[^<>]*>", " ", cell))  # [^<>]: linear on a run of "<"
    if m:
        return m.group("ref"), m.group("digest")
    return None


def bad_digest(cell: str) -> str | None:
    """The first digest an image cell writes that is not 64 lowercase hex digits (a
    published typo such as a 65th character): the import keeps the image by its tag and
    reports the digest, never a digest the page does not state."""
    for m in _WRITTEN_DIGEST.finditer(cell):
        if not _HEX64.fullmatch(m.group("hex")):
            return "sha256-" + m.group("hex")[:80]
    return None


def _alias_from(reference: str) -> str:
    tag = reference.rsplit(":", 1)[-1]
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", tag).strip("_.-") or "image"


_RESIDUE = re.compile(r"[`<>|*\\]|_\Z")


def check_cell(value: str, raw: str, where: str) -> None:
    """A cleaned cell that still holds markup did not parse (an unclosed link, a stray
    backtick): an error naming its line, never garbage in the catalog."""
    if _RESIDUE.search(value) or any(ord(ch) < 32 for ch in value):
        raise RstImportError(
            f"{where}: cell {raw.strip()[:80]!r} does not parse (markup left after cleaning: "
            "an unclosed link `text <url>`_, a stray backtick or bracket?)"
        )


def read_page(text: str, source: str = "<rst>", defs: cells.Defs | None = None) -> PageRead:
    """Every image of the document's image components list-tables, with the report
    (``rst_page``)."""
    from .rst_page import read_page as read

    return read(text, source, defs)


def parse(text: str, source: str = "<rst>", defs: cells.Defs | None = None) -> list[dict[str, Any]]:
    """Catalog entries from every image-components list-table of the document."""
    return list(read_page(text, source, defs).entries)


# ------------------------------------------------------------------ merge ---


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
        idx = next((i for i, e in enumerate(result) if e.get("alias") == new["alias"]), None)
        if idx is None:
            idx = next(
                (i for i, e in enumerate(result) if e.get("reference") == new["reference"]), None
            )
        if idx is None:
            result.append(dict(new))
            changes.append(Change("added", new["alias"]))
            continue
        old = result[idx]
        comps_old = {str(k): str(v) for k, v in (old.get("components") or {}).items()}
        normalized_old = {**old, "components": comps_old}
        details = _details(normalized_old, new)
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


# ----------------------------------------------------------------- render ---


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
    out: list[str] = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        out.append(line[1:].removeprefix(" "))
    return "\n".join(out)


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


def _with_backends(page: PageRead, backend: str) -> list[dict[str, Any]]:
    """The page's entries, each naming its backend where the file's head says another."""
    out = []
    for e in page.entries:
        own = page.backend_of(e["alias"])
        out.append(e if own == backend else {**e, "backend": own})
    return out


def plan_import(
    rst_text: str,
    existing: str | None,
    source: str = "<rst>",
    target: str = "<catalog>",
    defs: cells.Defs | None = None,
) -> Plan:
    """Parse the table, merge it into the existing catalog file's text (or none), render."""
    page = read_page(rst_text, source, defs)
    head: dict[str, Any] = {}
    old_entries: list[dict[str, Any]] = []
    comment = ""
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
    entries = _with_backends(page, str(head.get("backend", "")))
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
