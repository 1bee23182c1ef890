"""The vendors' published release tables, kept beside the catalog, and what an image's
measured inventory says against them. Pure: text in, tables and findings out.

* ROCm's historical compatibility matrix (``compatibility-matrix-historical-6.0.csv`` as
  published): one column per ROCm release, one row per library (hipBLASLt, MIOpen, RCCL …)
  or framework (PyTorch "2.4, 2.3"), cells with Sphinx markup and footnote marks.
* PyTorch's ``RELEASE.md`` "Release Compatibility Matrix" (Markdown as published): per
  PyTorch minor version the Python range, the stable and experimental CUDA versions and,
  in later releases, the stable ROCm version.

The table file (``images/releases.json``) is JSON so that the catalog loader, which reads
``images/*.yaml``, never takes it for a catalog file.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import asdict, dataclass
from typing import Any

from ..components import Component, Inventory, version_matches
from .rst_cells import Defs, versions

ROCM_FIRST_COLUMN = "ROCm Version"
FRAMEWORKS = ("pytorch", "tensorflow", "jax", "onnx runtime")
_VERSION_LIST = re.compile(r"(?:>=\s*)?\d+(?:\.\d+)*(?:\s*,\s*\d+(?:\.\d+)*)*")
_FOOTNOTE = re.compile(r"\s*\[#?[\w-]*\]_")
_DOC = re.compile(
    r":doc:`([^`<]*?)\s*(?:<[^>]*>)?`|`([^`<]*?)\s*<[^>]*>`__?|:ref:`([^`<]*?)\s*(?:<[^>]*>)?`"
)


class ReleaseTableError(ValueError):
    """The file is not a release table as published (the CLI turns it into exit 2)."""


def _name(cell: str) -> str:
    text = _DOC.sub(lambda m: next(g for g in m.groups() if g is not None), cell)
    return " ".join(_FOOTNOTE.sub("", text).split())


def parse_rocm_csv(text: str, source: str) -> dict[str, Any]:
    """ROCm's historical matrix: {"releases": [newest first], "libraries": {name: {release:
    value}}}. A first column other than "ROCm Version", or a row whose cell count differs
    from the header's, is an error naming its line."""
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        raise ReleaseTableError(
            f"{source}:1: empty file: expected a header row "
            f"'{ROCM_FIRST_COLUMN},<release>,<release>…'"
        )
    if not header or header[0].strip() != ROCM_FIRST_COLUMN:
        first = header[0].strip()[:40] if header else ""
        raise ReleaseTableError(
            f"{source}:1: unknown first column {first!r}: expected '{ROCM_FIRST_COLUMN}' "
            "(ROCm's compatibility-matrix-historical CSV, one column per release)"
        )
    releases = [h.strip() for h in header[1:]]
    bad = [r for r in releases if not re.fullmatch(r"\d+(?:\.\d+)+", r)]
    if bad:
        raise ReleaseTableError(
            f"{source}:1: column {bad[0]!r} is not a ROCm release: expected versions such as 6.3.3"
        )
    libraries: dict[str, dict[str, str]] = {}
    for row in reader:
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise ReleaseTableError(
                f"{source}:{reader.line_num}: {len(row)} cells, the header has {len(header)}: "
                "expected one cell per release (a quoted cell with a comma?)"
            )
        name = _name(row[0])
        cells = [_name(c) for c in row[1:]]
        if not name or any(c.startswith(".. _") for c in cells):
            continue  # a continuation line (more operating systems) or a section heading
        libraries.setdefault(name, dict(zip(releases, cells, strict=True)))
    return {"source": source, "releases": releases, "libraries": libraries}


def defs_of(table: dict[str, Any]) -> Defs:
    """The definitions ``:version-ref:`` reads, from an imported ROCm table."""
    return Defs(
        libraries=dict(table.get("libraries", {})),
        releases=tuple(table.get("releases", ())),
        source=str(table.get("source", "")),
    )


_MATRIX_HEADING = re.compile(r"^#+\s*Release Compatibility Matrix\s*$", re.M | re.I)


def parse_pytorch_release(text: str, source: str) -> dict[str, Any]:
    """PyTorch's RELEASE.md matrix: {"rows": [{pytorch, python, cuda, experimental_cuda,
    rocm}]}. No matrix, a first column other than "PyTorch version" or a ragged row is an
    error naming its line."""
    m = _MATRIX_HEADING.search(text)
    if m is None:
        raise ReleaseTableError(
            f"{source}:1: no '## Release Compatibility Matrix' section: expected PyTorch's "
            "RELEASE.md as published"
        )
    start = text.count("\n", 0, m.start()) + 1
    rows: list[tuple[int, list[str]]] = []
    for n, ln in enumerate(text.splitlines()[start:], start=start + 1):
        if not ln.strip():
            continue
        if not ln.lstrip().startswith("|"):
            if rows:
                break
            continue
        rows.append((n, [c.strip() for c in ln.strip().strip("|").split("|")]))
    if len(rows) < 3:
        raise ReleaseTableError(f"{source}:{start}: the matrix has no rows: expected a table")
    header_line, header = rows[0]
    if not header[0].lower().startswith("pytorch version"):
        raise ReleaseTableError(
            f"{source}:{header_line}: unknown first column {header[0][:40]!r}: expected "
            "'PyTorch version'"
        )
    keys = [re.sub(r"[^a-z]+", "_", h.lower()).strip("_") for h in header]
    out = []
    for n, cells in rows[2:]:
        if len(cells) != len(header):
            raise ReleaseTableError(
                f"{source}:{n}: {len(cells)} cells, the header has {len(header)}: expected "
                "one cell per column"
            )
        row = dict(zip(keys, cells, strict=True))
        out.append(
            {
                "line": n,
                "pytorch": row["pytorch_version"],
                "python": row.get("python", ""),
                "cuda": _product_versions(row.get("stable_cuda", ""), "CUDA"),
                "experimental_cuda": _product_versions(row.get("experimental_cuda", ""), "CUDA"),
                "rocm": _product_versions(row.get("stable_rocm", ""), "ROCm"),
                "has_rocm": "stable_rocm" in row,
            }
        )
    return {"source": source, "rows": out}


def _product_versions(cell: str, product: str) -> list[str]:
    return re.findall(rf"\b{product}\s+(\d+(?:\.\d+)*)", cell)


def python_allowed(spec: str, python: str) -> bool:
    """ ">=3.8, <=3.11, (3.12 experimental)" or ">=3.10, <=(3.14, 3.14t experimental)"."""
    got = _minor(python)
    if got is None:
        return True
    low = re.search(r">=\s*(\d+\.\d+)", spec)
    high = re.search(r"<=\s*\(?\s*(\d+\.\d+)", spec)
    extra = [_minor(v) for v in re.findall(r"(\d+\.\d+)t?\s+experimental", spec)]
    inside = (low is None or got >= _minor(low.group(1))) and (  # type: ignore[operator]
        high is None or got <= _minor(high.group(1))  # type: ignore[operator]
    )
    return inside or got in extra


def _minor(version: str) -> tuple[int, int] | None:
    m = re.match(r"v?(\d+)\.(\d+)", version.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


@dataclass(frozen=True)
class Published:
    """One published claim against what the image holds."""

    kind: str  # agrees, drift, lacking, unpublished
    subject: str
    published: str
    measured: str | None
    source: str
    message: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _measured(inv: Inventory, name: str) -> Component | None:
    slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    low = name.lower().replace(" ", "")
    for key in (slug, low, f"deb:{low}", f"deb:{low}-dev", f"deb:{low}-hip", f"pip:{low}"):
        comp = inv.get(key)
        if comp is not None:
            return comp
    return None


def release_of(table: dict[str, Any], wanted: str | None) -> str | None:
    """The table's release that a measured or catalogued ROCm version names (6.3 is 6.3.0)."""
    if not wanted:
        return None
    releases = list(table.get("releases", ()))
    parts = re.findall(r"\d+", wanted)[:3]
    for candidate in (".".join(parts), ".".join(parts + ["0"] * (3 - len(parts)))):
        if candidate in releases:
            return candidate
    return None


def library_findings(table: dict[str, Any], release: str, inv: Inventory) -> list[Published]:
    """Every library the release's column names with one version, against the image."""
    source = f"{table.get('source', 'release table')} (ROCm {release})"
    out: list[Published] = []
    for name, by_release in table.get("libraries", {}).items():
        claim = str(by_release.get(release, "")).strip()
        found = versions(claim.lstrip(">=~ "))
        if not found or _VERSION_LIST.fullmatch(claim) is None:
            continue  # not a library version (an operating system, a GPU target, "6.3.x")
        comp = _measured(inv, name)
        framework = name.lower() in FRAMEWORKS
        if comp is None:
            if not framework:
                text = f"{name}: ROCm {release} ships {claim}, the image has none"
                out.append(Published("lacking", name, claim, None, source, text))
            continue
        ok = (
            any(version_matches(v, comp.value) for v in found)
            if framework or len(found) > 1
            else _at_least(found[0], comp.value)
            if claim.startswith(">=")
            else version_matches(found[0], comp.value)
        )
        kind = "agrees" if ok else "drift"
        text = f"{name}: ROCm {release} publishes {claim}, the image has {comp.value}"
        out.append(Published(kind, name, claim, comp.value, source, text))
    return out


def _at_least(minimum: str, found: str) -> bool:
    want = [int(t) for t in re.findall(r"\d+", minimum)]
    got = [int(t) for t in re.findall(r"\d+", found)][: len(want)]
    return got >= want


def pytorch_findings(table: dict[str, Any], inv: Inventory) -> list[Published]:
    """The image's PyTorch, Python, CUDA and ROCm against PyTorch's published combinations."""
    torch = inv.get("pytorch")
    if torch is None:
        return []
    source = str(table.get("source", "RELEASE.md"))
    minor = _minor(torch.value)
    row = next((r for r in table.get("rows", ()) if _minor(r["pytorch"]) == minor), None)
    if row is None:
        text = f"PyTorch {torch.value}: not in RELEASE.md's compatibility matrix"
        return [Published("unpublished", "pytorch", "-", torch.value, source, text)]
    out: list[Published] = []
    python = inv.get("python")
    if python is not None:
        ok = python_allowed(row["python"], python.value)
        text = f"Python {python.value} with PyTorch {row['pytorch']}: " + (
            "published" if ok else f"PyTorch publishes {row['python']}"
        )
        kind = "agrees" if ok else "unpublished"
        out.append(Published(kind, "python", row["python"], python.value, source, text))
    for key, label, allowed in (
        ("cuda", "CUDA", row["cuda"] + row["experimental_cuda"]),
        ("rocm", "ROCm", row["rocm"] if row.get("has_rocm") else None),
    ):
        comp = inv.get("pytorch.cuda") or inv.get("cuda") if key == "cuda" else inv.get("rocm")
        if comp is None or allowed is None:
            continue
        ok = any(_minor(v) == _minor(comp.value) for v in allowed)
        shown = ", ".join(allowed) or "none"
        text = f"{label} {comp.value} with PyTorch {row['pytorch']}: " + (
            "published" if ok else f"PyTorch publishes {label} {shown}"
        )
        kind = "agrees" if ok else "unpublished"
        out.append(Published(kind, key, shown, comp.value, source, text))
    return out


def published_versions(table: dict[str, Any], components: dict[str, str]) -> dict[str, str]:
    """Library name (lower case) → the version the release the components measure (their
    "rocm") publishes; {} when they measure no release of the table."""
    release = release_of(table, components.get("rocm"))
    if release is None:
        return {}
    out = {}
    for name, by_release in table.get("libraries", {}).items():
        claim = str(by_release.get(release, "")).strip()
        if claim and _VERSION_LIST.fullmatch(claim):
            out[name.lower()] = claim
    return out
