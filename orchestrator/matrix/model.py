"""Stored results → a compatibility Matrix (pure: no I/O, no SQL).

A cell is the verdict for one check (or feature) in one environment, in the
vocabulary of docs/statuses.md: ✅ pass, ⚠️ partial, ❌ fail/crash/timeout, ⊘ unsupported,
⁇ inconclusive (error) or flaky (mixed attempts), ⚑ known issue (xfail), blank for skip and n/a.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from ..statuses import FAILING as FAILING  # re-exported: the site reads it from here
from ..statuses import INCONCLUSIVE, NOT_APPLICABLE, SYMBOL


@dataclass(frozen=True)
class Observation:
    """One attempt of one check in one environment, as read from the store."""

    column: str
    check: str
    feature: str
    kind: str
    # what the evidence says ran (profiler kernel names, the CPU library), never a label
    library: str | None
    status: str
    attempt: int
    run_id: str
    message: str = ""
    when: datetime | None = None  # when the run that measured it ended (the evidence's date)
    device: str | None = None  # where it ran: "cpu", "cuda:0 NVIDIA H100 …"
    flags: tuple[str, ...] = ()  # matrix.evidence: cpu-only, previous-digest, newer-inconclusive
    version: int | None = None
    value: str | None = None  # what a version row measured ("2.13.0+cpu"): shown beside its verdict
    backend: str | None = None  # the image's backend (rocm, cuda, cpu): with ``device``, cpu-only


GPU_BACKENDS = ("rocm", "cuda")


def ran_on_cpu(device: str | None) -> bool:
    return bool(device) and str(device).strip().lower().startswith("cpu")


@dataclass(frozen=True)
class RunInfo:
    """One column's run of a layout (``layouts``, ``seed``): its image, backend, host and
    the image's catalogued components."""

    run_id: str
    image: str
    backend: str
    host: str
    components: dict[str, str] = field(default_factory=dict)
    ended: datetime | None = None

    def group(self, columns: str) -> str:
        return {"images": self.image, "backends": self.backend, "hosts": self.host}[columns]


@dataclass(frozen=True)
class Cell:
    verdict: str  # a status (spec.STATUSES), flaky, missing or cpu-only
    statuses: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()
    message: str = ""
    when: datetime | None = None  # the oldest evidence behind the cell
    flags: tuple[str, ...] = ()
    value: str | None = None  # a measured version, shown with the verdict

    @property
    def symbol(self) -> str:
        return SYMBOL[self.verdict]

    @property
    def text(self) -> str:
        """Symbol plus the word where the symbol alone is ambiguous; a measured version with it."""
        if self.verdict == "pass" and self.value:
            return f"{self.symbol} {self.value}"
        if self.verdict in ("pass", "skip", NOT_APPLICABLE, "missing"):
            return self.symbol
        return f"{self.symbol} {self.verdict.replace('-', ' ')}".strip()


@dataclass(frozen=True)
class Row:
    key: str
    feature: str
    kind: str
    # the libraries evidence names in this row's cells, in order; None: no evidence
    library: str | None


def _libraries(found: Iterable[str | None]) -> str | None:
    """The distinct evidenced libraries of a row ("MKL · hipBLASLt"), None when none ran."""
    libs = list(dict.fromkeys(lib for lib in found if lib))
    return " · ".join(libs) or None


@dataclass(frozen=True)
class Matrix:
    rows: tuple[Row, ...]
    columns: tuple[str, ...]
    cells: dict[tuple[str, str], Cell] = field(default_factory=dict)

    def cell(self, row: str, column: str) -> Cell:
        return self.cells.get((row, column), Cell("missing"))


def verdict(statuses: Iterable[str]) -> str:
    """The cell verdict for the attempts of one check (in attempt order)."""
    seq = list(statuses)
    if not seq:
        return "missing"
    has_pass = "pass" in seq
    if has_pass and any(s in FAILING for s in seq):
        return "flaky"
    return seq[-1]


def final_counts(attempts: Iterable[tuple[str, int, str]]) -> Counter[str]:
    """How many checks ended in each verdict, from their (check id, attempt, status) attempts."""
    per: dict[str, list[str]] = {}
    for check, _attempt, status in sorted(attempts, key=lambda a: a[1]):
        per.setdefault(check, []).append(status)
    return Counter(verdict(v) for v in per.values())


def cell(attempts: Iterable[Observation]) -> Cell:
    """The one rule that decides a matrix cell from the attempts that speak for it (one
    check, one column; docs/matrix.md, docs/statuses.md): the verdict of the attempts in
    attempt order (fail then pass is flaky, else the last status), and a pass whose evidence
    ran on the CPU of a ROCm or CUDA image is ``cpu-only`` (◐), never a GPU ✅, whatever the
    reason (``--cpu-only``, no visible GPU, a check that never asks for a device). ``run``'s
    matrix, ``matrix render`` / ``publish`` and the site all decide their cells here."""
    group = sorted(attempts, key=lambda o: o.attempt)
    if not group:
        return Cell("missing")
    last = group[-1]
    flags = list(dict.fromkeys(f for o in group for f in o.flags))
    if "cpu-only" not in flags and any(
        o.backend in GPU_BACKENDS and ran_on_cpu(o.device) for o in group
    ):
        flags.append("cpu-only")
    v = verdict(o.status for o in group)
    if v == "pass" and "cpu-only" in flags:
        v = "cpu-only"  # a GPU image's check that ran on the CPU is never a GPU ✅
    return Cell(
        v,
        tuple(o.status for o in group),
        tuple(sorted({o.run_id for o in group})),
        last.message,
        min((o.when for o in group if o.when is not None), default=None),
        tuple(flags),
        last.value,
    )


def build(observations: Iterable[Observation], columns: Iterable[str] | None = None) -> Matrix:
    """A checks × columns matrix; rows keep the order in which checks first appear; each cell
    decided by ``cell``."""
    per: dict[tuple[str, str], list[Observation]] = {}
    rows: dict[str, Row] = {}
    libs: dict[str, list[str | None]] = {}
    cols: list[str] = list(columns or [])
    for obs in observations:
        rows.setdefault(obs.check, Row(obs.check, obs.feature, obs.kind, None))
        libs.setdefault(obs.check, []).append(obs.library)
        if obs.column not in cols:
            cols.append(obs.column)
        per.setdefault((obs.check, obs.column), []).append(obs)
    cells = {key: cell(group) for key, group in per.items()}
    rows = {k: Row(r.key, r.feature, r.kind, _libraries(libs[k])) for k, r in rows.items()}
    return Matrix(tuple(rows.values()), tuple(cols), cells)


FAILING_OR_UNSUPPORTED = (*FAILING, "unsupported")
#: the summary and seed layouts' legend (one meaning per symbol, as LEGEND)
SUPPORT_LEGEND = (
    "✅: full support · ⚠️: partial support · ❌: fails · ⊘: not supported (not installed or does "
    "not exist) · ⁇: inconclusive · ⚑: waived · blank: not applicable · —: not run"
)
SILENT = ("skip", NOT_APPLICABLE, "missing")  # cells that say nothing about the image


def combine(cells: Iterable[Cell]) -> Cell:
    """One verdict from several cells (checks evidencing one feature, or images of one backend): all
    pass → pass; any failing (❌) or unsupported (⊘) → that; otherwise partial, then the inconclusive
    one (flaky, waived, error). Skipped, not applicable and missing cells say nothing."""
    cells = list(cells)
    said = [c for c in cells if c.verdict not in SILENT]
    statuses = tuple(s for c in cells for s in c.statuses)
    runs = tuple(sorted({r for c in cells for r in c.runs}))
    when = min((c.when for c in cells if c.when is not None), default=None)
    flags = tuple(dict.fromkeys(f for c in cells for f in c.flags))
    if not said:  # skipped, else not applicable, else missing: whichever some cell says
        quiet = next(
            (v for v in ("skip", NOT_APPLICABLE) if v in {c.verdict for c in cells}), "missing"
        )
        return Cell(quiet, statuses, runs, "", when, flags)
    verdicts = [c.verdict for c in said]
    message = next((c.message for c in said if c.verdict != "pass" and c.message), "")
    if all(v == "pass" for v in verdicts):
        values = {c.value for c in said}
        return Cell(
            "pass", statuses, runs, "", when, flags, values.pop() if len(values) == 1 else None
        )
    for bad in (*FAILING_OR_UNSUPPORTED, "partial", *INCONCLUSIVE, "cpu-only"):
        if bad in verdicts:
            return Cell(bad, statuses, runs, message, when, flags)
    return Cell("error", statuses, runs, message, when, flags)


def regroup(
    matrix: Matrix, *, rows: dict[str, str] | None = None, columns: dict[str, str] | None = None
) -> Matrix:
    """Merge rows (check → feature) and/or columns (image → backend) with combine()."""
    row_of = rows or {r.key: r.key for r in matrix.rows}
    col_of = columns or {c: c for c in matrix.columns}
    new_rows: dict[str, Row] = {}
    libs: dict[str, list[str | None]] = {}
    for r in matrix.rows:
        key = row_of[r.key]
        libs.setdefault(key, []).extend((r.library or "").split(" · "))
        new_rows.setdefault(key, Row(key, r.feature if rows is None else key, r.kind, None))
    new_rows = {k: Row(r.key, r.feature, r.kind, _libraries(libs[k])) for k, r in new_rows.items()}
    new_cols = list(dict.fromkeys(col_of[c] for c in matrix.columns))
    parts: dict[tuple[str, str], list[Cell]] = {}
    for r in matrix.rows:
        for c in matrix.columns:
            if (r.key, c) in matrix.cells:
                parts.setdefault((row_of[r.key], col_of[c]), []).append(matrix.cells[(r.key, c)])
    # one cell alone is its own combination (the usual image columns): no work per cell
    return Matrix(
        tuple(new_rows.values()),
        tuple(new_cols),
        {k: v[0] if len(v) == 1 else combine(v) for k, v in parts.items()},
    )


def by_feature(matrix: Matrix) -> Matrix:
    """Rows = features; a feature's cell combines the checks that evidence it."""
    return regroup(matrix, rows={r.key: r.feature or r.key for r in matrix.rows})
