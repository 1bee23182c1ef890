"""The table and cell primitives of the reStructuredText importers (pure): list-tables found
in a page, a cell cleaned of its markup, a header named as a catalog component, an image
cell read as a reference and digest. ``rst_page`` reads a page with them and ``rst_import``
merges what it read into a catalog file; both import this module, which imports neither."""

from __future__ import annotations

import re
from dataclasses import dataclass

# header text (normalized) -> catalog component key; None marks the image column
HEADERS: dict[str, str | None] = {
    **dict.fromkeys(("docker", "docker image", "docker images", "image", "tag", "docker tag")),
    **dict.fromkeys(("pytorch", "torch"), "pytorch"),
    **dict.fromkeys(("linux", "os", "operating system", "distro"), "linux"),
    **dict.fromkeys(("ompi", "open mpi", "openmpi", "mpi"), "ompi"),
    **dict.fromkeys(("ofed", "mlnx ofed"), "ofed"),
    **{k: k for k in ("ubuntu", "debian", "python", "apex", "torchvision", "torchaudio")},
    **{k: k for k in ("tensorboard", "magma", "ucx", "rocm", "cuda", "cudnn", "nccl", "rccl")},
    **{k: k for k in ("tensorflow", "triton", "numpy")},
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
        while i < len(lines) and (
            not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip(" ")) > base
        ):
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
                # int() of 5000 digits raises; no table has 10**4 header rows
                if len(hr.group(1)) > 4:
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
            m = row_m or cell_m
            if m and rows and (row_m or len(m.group(1)) == cell_col):
                cell = [m.group(3)]
                rows[-1].append("")
                starts[-1].append(lineno)
            elif cell is not None:
                cell.append(line.strip())
            else:
                continue
            rows[-1][-1] = "\n".join(cell).strip()
        cells, lines_of = tuple(tuple(r) for r in rows), tuple(tuple(c) for c in starts)
        tables.append(ListTable(title, start + 1, header_rows, cells, lines_of))
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
