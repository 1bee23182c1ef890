"""One page of a docs family read whole: every image of its Docker image components
tables, with its backend and ROCm version from the evidence on the page, its components as
bare versions, its labels, and the cells the import could not read (the report). The table
and cell primitives are ``rst_table``'s; what a cell says is ``rst_cells``'."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from . import rst_cells as cells
from . import rst_tags
from .core import parse_tag
from .rst_table import (
    _DISTROS,
    _KNOWN,
    ListTable,
    RstImportError,
    _alias_from,
    bad_digest,
    check_cell,
    clean,
    header_key,
    image_of,
    list_tables,
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


@dataclass(frozen=True)
class Note(Unread):
    """A cell imported with a remark: a Debian revision trimmed, a tag its columns contradict."""


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
    notes: tuple[Note, ...] = ()

    def report(self) -> dict[str, Any]:
        return {
            "page": self.source,
            "images": [{**asdict(i), "labels": dict(i.labels)} for i in self.images],
            "backends": sorted({i.backend for i in self.images}),
            "unread": [asdict(u) for u in self.unread],
            "notes": [asdict(n) for n in self.notes],
        }


@dataclass(frozen=True)
class _Columns:
    keys: list[str | None]  # component key, None for the image column
    labels: frozenset[int]  # columns whose cells are words (a flavour, a note), not versions
    names: list[str]  # the header text, cleaned


def _columns(
    table: ListTable, rows: tuple[tuple[str, ...], ...], defs: cells.Defs, pictures: frozenset[str]
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
    labels: dict[str, str] = {}
    unread: list[Unread] = []
    line = cell_where(image_col)[1]
    if header.count(None) > 1:  # one image per image column: its header names the variant
        labels["variant"] = columns.names[image_col]
    typo = bad_digest(cells_raw[image_col])
    if typo:
        why = "a digest that is not 64 hex digits: the image is kept by its tag, without one"
        unread.append(Unread(line, title, alias, columns.names[image_col], typo, why))
    comps: dict[str, str] = {}  # the row's versions by catalog key; its label cells in labels
    for col, (key, raw) in enumerate(zip(header, cells_raw, strict=False)):
        if key is None:
            continue
        text, markup = cells.substitute(raw, defs, pictures)
        value = clean(text)
        at, at_line = cell_where(col)
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
            unread.append(
                Unread(at_line, title, alias, columns.names[col], raw.strip(), said.unread)
            )
            continue
        if said.version is None:
            continue
        if key == "linux":  # "Ubuntu 22.04", or a bare version of the tag's distro
            first = value.split()[0].lower() if value.split() else ""
            key = first if first in _DISTROS else (os_text or "linux").split()[0]
        comps[key], dropped = rst_tags.trimmed(value, said.version)
        if dropped:
            unread.append(Note(at_line, title, alias, columns.names[col], raw.strip(), dropped))
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
            why = "a ROCm image whose ROCm version neither the table, the tag nor the page states"
            unread.append(Unread(line, title, alias, "ROCm", reference, why))
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
        alias, reference, backend, comps.get("rocm"), title, line, tuple(labels.items())
    )
    return entry, read, unread


def _no_table(source: str, tables: list[ListTable], text: str) -> RstImportError:
    expected = (
        "expected a `.. list-table::` whose first header row names the image column "
        "(Docker / Docker image / Image / Tag)"
    )
    moved = rst_tags.moved_to(text)
    if not tables:
        return RstImportError(f"{source}:1: no list-table on the page: {moved or expected}")
    at = ", ".join(str(t.line) for t in tables[:8])
    return RstImportError(
        f"{source}:{tables[0].line}: no Docker image components table (list-tables at lines "
        f"{at} have no image column): {moved or expected}"
    )


def read_page(text: str, source: str = "<rst>", defs: cells.Defs | None = None) -> PageRead:
    """Every image of the document's image components list-tables, with the report."""
    defs = (defs or cells.Defs()).with_page(text)
    pictures = cells.icons(text)
    entries: list[dict[str, Any]] = []
    images: list[ImageRead] = []
    unread: list[Unread] = []
    tables = rst_tags.with_pulled_images(text, list_tables(text))
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
                for key, why in rst_tags.contradictions(read.reference, entry["components"]):
                    missed.append(Note(read.line, read.table, read.alias, key, read.reference, why))
                entries.append(entry)
                images.append(read)
                unread.extend(missed)
    if not candidates:
        raise _no_table(source, tables, text)
    _unique_aliases(entries, images, source)
    notes = tuple(u for u in unread if isinstance(u, Note))
    kept = tuple(u for u in unread if not isinstance(u, Note))
    return PageRead(source, tuple(entries), tuple(images), kept, notes)


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
