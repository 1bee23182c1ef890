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
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from ..spec import Change
from . import rst_cells as cells
from .core import parse_tag

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
    r"/images/sha256-(?P<hex>[0-9a-f]{64})"
)
_REF = re.compile(
    r"\b(?P<ref>[a-z0-9][a-z0-9._-]*/[a-z0-9][a-z0-9._-]*:[A-Za-z0-9][A-Za-z0-9._-]*)"
    r"(?:@(?P<digest>sha256:[0-9a-f]{64}))?"
)
_LINK = re.compile(r"`([^`<]*?)\s*<([^>]*)>`__?")
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
    text = _LINK.sub(lambda m: m.group(1) or m.group(2), text)
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
        return f"{name}:{m.group('tag')}", "sha256:" + m.group("hex")
    m = _REF.search(re.sub(r"<[^>]*>", " ", cell))
    if m:
        return m.group("ref"), m.group("digest")
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


@dataclass(frozen=True)
class Unread:
    """A cell the import could not read as a version (it is not a component)."""

    line: int
    table: str
    image: str
    column: str
    cell: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "table": self.table,
            "image": self.image,
            "column": self.column,
            "cell": self.cell,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class ImageRead:
    """One imported image as the report names it."""

    alias: str
    reference: str
    backend: str
    rocm: str | None
    table: str
    line: int
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class PageRead:
    """Every image of a page's components tables, and what the import could not read."""

    source: str
    entries: tuple[dict[str, Any], ...]
    images: tuple[ImageRead, ...]
    unread: tuple[Unread, ...]

    def backend_of(self, alias: str) -> str:
        return next(i.backend for i in self.images if i.alias == alias)

    def report(self) -> dict[str, Any]:
        return {
            "page": self.source,
            "images": [
                {
                    "alias": i.alias,
                    "reference": i.reference,
                    "backend": i.backend,
                    "rocm": i.rocm,
                    "table": i.table,
                    "line": i.line,
                    "labels": dict(i.labels),
                }
                for i in self.images
            ],
            "backends": sorted({i.backend for i in self.images}),
            "unread": [u.as_dict() for u in self.unread],
        }


@dataclass(frozen=True)
class _Columns:
    keys: list[str | None]  # component key, None for the image column
    labels: frozenset[int]  # columns whose cells are words (a flavour, a note), not versions
    names: list[str]  # the header text, cleaned


def _columns(
    table: ListTable,
    rows: tuple[tuple[str, ...], ...],
    defs: cells.Defs,
    pictures: frozenset[str],
) -> _Columns:
    """Which columns hold versions: a known component, or most of its cells a version (or a
    role that stands for one); the others are labels (a flavour, a GPU, a commit)."""
    header = list(table.rows[0])
    keys = [header_key(c) for c in header]
    labels: set[int] = set()
    for col, key in enumerate(keys):
        if key is None or key in _KNOWN:
            continue  # a known component column: its cells must be versions
        said = []
        for r in rows:
            text, markup = cells.substitute(r[col], defs, pictures) if col < len(r) else ("", None)
            said.append(cells.read(clean(text), markup=markup))
        votes = [c.version is not None or c.markup is not None for c in said if not c.empty]
        if not votes or sum(votes) * 2 < len(votes):
            labels.add(col)
    return _Columns(keys, frozenset(labels), [clean(h) for h in header])


def _image_backend(
    reference: str, comps: dict[str, str], page: tuple[str | None, str | None]
) -> tuple[str | None, str | None]:
    """(backend, ROCm version) from the evidence: the table's ROCm column, then the tag and
    repository, then the page's words for the table."""
    tag_backend, tag_version = cells.tag_evidence(reference)
    if "rocm" in comps:
        return "rocm", comps["rocm"]
    if tag_backend == "rocm" or (tag_backend is None and page[0] == "rocm"):
        return "rocm", tag_version if tag_backend == "rocm" and tag_version else page[1]
    if "cuda" in comps:
        return "cuda", comps["cuda"]
    return tag_backend, tag_version


def entry_of(
    columns: _Columns,
    image_col: int,
    cells_raw: tuple[str, ...],
    where: str,
    cell_where: Callable[[int], tuple[str, int]],
    context: tuple[cells.Defs, frozenset[str], tuple[str | None, str | None], str],
) -> tuple[dict[str, Any], ImageRead, list[Unread]]:
    defs, pictures, page, title = context
    header = columns.keys
    found = image_of(cells_raw[image_col]) if image_col < len(cells_raw) else None
    if found is None:
        raise RstImportError(
            f"{where}: the image cell names no image (no layer link, no repo/name:tag)"
        )
    reference, digest = found
    parsed = parse_tag(reference)
    os_text = parsed.os if parsed is not None else None
    alias = parsed.alias if parsed is not None else _alias_from(reference)
    comps: dict[str, str] = {}
    labels: dict[str, str] = {}
    unread: list[Unread] = []
    if header.count(None) > 1:  # one image per image column: its header names the variant
        labels["variant"] = columns.names[image_col]
    for col, (key, raw) in enumerate(zip(header, cells_raw, strict=False)):
        if key is None:
            continue
        text, markup = cells.substitute(raw, defs, pictures)
        value = clean(text)
        at, line = cell_where(col)
        if markup is None:
            check_cell(value, raw, at)
        said = cells.read(value, markup=markup)
        if col in columns.labels and markup is None:
            if said.label or said.version:
                labels[key] = value
            continue
        if said.unread:
            if said.markup:
                labels[key] = said.unread
            unread.append(Unread(line, title, alias, columns.names[col], raw.strip(), said.unread))
            continue
        if said.version is None:
            continue
        if key == "linux":  # "Ubuntu 22.04", or a bare version of the tag's distro
            first = value.split()[0].lower() if value.split() else ""
            key = first if first in _DISTROS else (os_text or "linux").split()[0]
        comps[key] = said.version
    backend, rocm = _image_backend(reference, comps, page)
    if backend is None:
        raise RstImportError(
            f"{where}: no evidence of the image's backend: neither its tag "
            f"({reference}), a ROCm or CUDA column, nor the page's words before the table "
            "name ROCm or CUDA (the backend is never assumed)"
        )
    if backend == "rocm":
        if rocm:
            comps = {"rocm": rocm, **{k: v for k, v in comps.items() if k != "rocm"}}
        else:
            unread.append(
                Unread(
                    cell_where(image_col)[1],
                    title,
                    alias,
                    "ROCm",
                    reference,
                    "a ROCm image whose ROCm version neither the table, the tag nor the page states",
                )
            )
    distro = next((k for k in comps if k in _DISTROS), None)
    if distro and os_text is None:
        os_text = f"{distro} {comps[distro]}"
    entry: dict[str, Any] = {"alias": alias, "reference": reference}
    if digest:
        entry["digest"] = digest
    if os_text:
        entry["os"] = os_text
    entry["components"] = comps
    if labels:
        entry["labels"] = labels
    read = ImageRead(
        alias,
        reference,
        backend,
        comps.get("rocm"),
        title,
        cell_where(image_col)[1],
        tuple(labels.items()),
    )
    return entry, read, unread


def _no_table(source: str, tables: list[ListTable]) -> RstImportError:
    expected = (
        "expected a `.. list-table::` whose first header row names the image column "
        "(Docker / Docker image / Image / Tag)"
    )
    if not tables:
        return RstImportError(f"{source}:1: no list-table on the page: {expected}")
    at = ", ".join(str(t.line) for t in tables[:8])
    return RstImportError(
        f"{source}:{tables[0].line}: no Docker image components table (list-tables at lines "
        f"{at} have no image column): {expected}"
    )


def read_page(text: str, source: str = "<rst>", defs: cells.Defs | None = None) -> PageRead:
    """Every image of the document's image components list-tables, with the report."""
    defs = (defs or cells.Defs()).with_page(text)
    pictures = cells.icons(text)
    entries: list[dict[str, Any]] = []
    images: list[ImageRead] = []
    unread: list[Unread] = []
    tables = list_tables(text)
    candidates = 0
    for table in tables:
        if not table.rows or None not in [header_key(c) for c in table.rows[0]]:
            continue  # not an image table (no Docker / image column)
        candidates += 1
        if table.header_rows < 1 or table.header_rows >= len(table.rows):
            raise RstImportError(
                f"{source}:{table.line}: table '{table.title}' has {len(table.rows)} rows and "
                f":header-rows: {table.header_rows}: no data rows below the header (expected "
                "one header row, then one row per image)"
            )
        data = table.rows[table.header_rows :]
        columns = _columns(table, data, defs, pictures)
        context = (defs, pictures, cells.page_evidence(text, table.line), table.title)
        for n, row in enumerate(data, start=1):
            lines = table.cell_lines[table.header_rows + n - 1] if table.cell_lines else ()

            def cell_where(
                col: int,
                n: int = n,
                lines: tuple[int, ...] = lines,
                title: str = table.title,
                directive: int = table.line,
            ) -> tuple[str, int]:
                line = lines[col] if col < len(lines) else directive
                return f"{source}:{line}: row {n} of '{title}', column {col + 1}", line

            if not any(clean(c) or image_of(c) for c in row):
                continue
            where = f"{source}:{lines[0] if lines else table.line}: row {n} of '{table.title}'"
            if len(row) != len(columns.keys):
                raise RstImportError(
                    f"{where} has {len(row)} cells, the header has {len(columns.keys)} "
                    "(expected one cell per header column)"
                )
            for image_col in (i for i, k in enumerate(columns.keys) if k is None):
                entry, read, missed = entry_of(columns, image_col, row, where, cell_where, context)
                entries.append(entry)
                images.append(read)
                unread.extend(missed)
    if not candidates:
        raise _no_table(source, tables)
    _unique_aliases(entries, images, source)
    return PageRead(source, tuple(entries), tuple(images), tuple(unread))


def _unique_aliases(entries: list[dict[str, Any]], images: list[ImageRead], source: str) -> None:
    """Two images with one tag in two repositories (rocm/jax, rocm/jax-community) get their
    repository in the alias; the same image twice is an error."""
    seen: dict[str, str] = {}
    for i, e in enumerate(entries):
        if e["alias"] in seen and seen[e["alias"]] == e["reference"]:
            raise RstImportError(f"{source}: image {e['reference']} appears twice")
        if e["alias"] in seen:
            repo = e["reference"].rsplit(":", 1)[0].rsplit("/", 1)[-1]
            e["alias"] = _alias_from(f"x:{repo}_{e['alias']}")
            images[i] = replace(images[i], alias=e["alias"])
        if e["alias"] in seen:
            raise RstImportError(f"{source}: image alias '{e['alias']}' appears twice")
        seen[e["alias"]] = e["reference"]


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
