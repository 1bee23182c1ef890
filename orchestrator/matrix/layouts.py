"""The layouts of `valorch matrix render --layout ...` (pure): stored observations,
run facts, catalog and inventory in; a matrix_doc.Table out. The seeds they copy
are in ../shared/seeds (see DESIGN.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from datetime import datetime
from typing import Any, Iterable, Sequence

from ..components import UNPINNED, version_matches
from .model import LEGEND, SYMBOL, Cell, Matrix, Observation, build, by_feature, combine, regroup
from .document import Table, TCell, TRow
from .since import since
from .tiers import Policy, tiers

LAYOUTS = ("checks", "features", "since", "components", "summary", "tiers")
ROWS = ("features", "checks")
COLUMNS = ("images", "backends", "hosts")
from ..spec import DECISIVE  # noqa: E402 (a verdict about the image: partial counts)
# (header, catalog key) of the seed's "PyTorch Docker image components" table
COMPONENT_COLUMNS = (("PyTorch", "pytorch"), ("Ubuntu", "ubuntu"), ("Python", "python"), ("Apex", "apex"),
                     ("torchvision", "torchvision"), ("TensorBoard", "tensorboard"), ("MAGMA", "magma"),
                     ("UCX", "ucx"), ("OMPI", "ompi"), ("OFED", "ofed"))
SINCE_COLUMNS = (("Since PyTorch", "pytorch"), ("Since ROCm", "rocm"))


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    image: str
    backend: str
    host: str
    components: dict[str, str] = field(default_factory=dict)
    ended: datetime | None = None

    def group(self, columns: str) -> str:
        return {"images": self.image, "backends": self.backend, "hosts": self.host}[columns]


@dataclass(frozen=True)
class CatalogImage:
    alias: str
    reference: str
    digest: str | None
    components: dict[str, str]


def grid(observations: Iterable[Observation], runs: Sequence[RunInfo], rows: str = "checks",
         columns: str = "images") -> Matrix:
    """Observations keyed by run id as column → rows × (images | backends | hosts)."""
    per_run = build(observations, [r.run_id for r in runs])
    m = regroup(per_run, columns={r.run_id: r.group(columns) for r in runs})
    return by_feature(m) if rows == "features" else m


def _tcell(cell: Cell, text: str | None = None) -> TCell:
    return TCell(cell.text if text is None else text, cell.verdict, cell.statuses, cell.runs, cell.message,
                 _day(cell.when) if cell.when else "", cell.flags)


@lru_cache(maxsize=4096)
def _day(when: datetime) -> str:
    return when.strftime("%Y-%m-%d")  # one per run, not per cell


def _labels(m: Matrix, rows: str) -> tuple[tuple[str, ...], int, Any]:
    if rows == "features":
        return ("Feature",), 0, lambda r: (r.key,)
    return ("Check", "Feature", "Library"), 1, lambda r: (r.key, r.feature, r.library or "")


def checks_table(obs: Sequence[Observation], runs: Sequence[RunInfo], rows: str, columns: str) -> Table:
    m = grid(obs, runs, rows, columns)
    heads, literal, labels = _labels(m, rows)
    body = tuple(TRow(r.key, labels(r), tuple(_tcell(m.cell(r.key, c)) for c in m.columns)) for r in m.rows)
    title = f"{'Features' if rows == 'features' else 'Checks'} by {columns[:-1]}"
    notes = (LEGEND,) if rows == "checks" else (LEGEND, "A feature combines the checks that evidence it: "
                                                "all pass ✅, any failing ❌, otherwise ⚠️.")
    return Table("features" if rows == "features" else "checks", title, heads, m.columns, body, notes, literal)


def since_table(obs: Sequence[Observation], runs: Sequence[RunInfo], rows: str) -> Table:
    m = grid(obs, runs, rows, "images")
    comps = {r.image: r.components for r in runs}
    heads, literal, labels = _labels(m, rows)
    body = []
    for r in m.rows:
        cells = []
        for _head, key in SINCE_COLUMNS:
            points, used = [], []
            for image in m.columns:
                cell = m.cell(r.key, image)
                if key in comps.get(image, {}) and cell.verdict in DECISIVE:
                    points.append((str(comps[image][key]), cell.verdict == "pass"))
                    used.append(cell)
            found = since(points)
            evidence = ", ".join(f"{v} {'✅' if ok else '❌'}" for v, ok in points)
            runs_ = tuple(sorted({x for c in used for x in c.runs}))
            cells.append(TCell(found or "—", "pass" if found else ("fail" if points else "missing"),
                               tuple(c.verdict for c in used), runs_, evidence))
        body.append(TRow(r.key, labels(r), tuple(cells)))
    note = ("Since: the earliest version at and after which every observed version passes "
            "(from the images' catalogued pytorch / rocm components); — : not passing in the newest version "
            "observed, or never observed.")
    return Table("since", "Feature support by version", heads, tuple(h for h, _ in SINCE_COLUMNS), tuple(body),
                 (note,), literal)


def summary_table(obs: Sequence[Observation], runs: Sequence[RunInfo]) -> Table:
    per_check = grid(obs, runs, "checks", "images")
    m = by_feature(per_check)
    checks_of: dict[str, list[str]] = {}
    for r in per_check.rows:
        checks_of.setdefault(r.feature or r.key, []).append(r.key)
    body = []
    for r in m.rows:
        cell = combine(m.cell(r.key, c) for c in m.columns)
        body.append(TRow(r.key, (r.key, ", ".join(checks_of.get(r.key, ()))), (_tcell(cell, SYMBOL[cell.verdict]),)))
    notes = ("✅: full support · ⚠️: partial support or inconclusive · ❌: not supported · "
             f"over {len(m.columns)} image(s): {', '.join(m.columns)}",)
    return Table("summary", "Supported features", ("Features", "Description"), ("Supported",), tuple(body), notes)


def tiers_table(obs: Sequence[Observation], runs: Sequence[RunInfo], columns: str, policy: Policy) -> Table:
    m = grid(obs, runs, "checks", "images")
    groups: dict[str, list[Cell]] = {}
    group_of = {r.image: r.group(columns) for r in runs}
    for image in m.columns:
        groups.setdefault(group_of[image], []).extend(m.cell(r.key, image) for r in m.rows)
    body = []
    for t in tiers(groups, policy):
        cell = lambda text: TCell(text, t.tier, (), t.runs)  # noqa: E731
        body.append(TRow(t.group, (t.group,), (cell(t.tier), cell(f"{t.rate:.1%}"), cell(str(t.passed)),
                                               cell(str(t.counted)), cell(str(t.crashes)))))
    head = {"images": "Image", "backends": "Backend", "hosts": "Host"}[columns]
    return Table("tiers", "Support tiers", (head,), ("Tier", "Pass rate", "Passed", "Counted", "Crashes"),
                 tuple(body), (policy.describe(),))


def _measured(inventory: dict[str, str], key: str) -> str | None:
    for name in (key, "pip:" + key, "deb:" + key):
        if name in inventory:
            return inventory[name]
    return None


def component_cell(expected: str, measured: str | None, run_id: str | None) -> TCell:
    runs = (run_id,) if run_id and measured is not None else ()
    if measured is None:
        return TCell(expected, "catalog" if expected else "missing")
    if not expected:
        return TCell(measured, "measured", (), runs, f"not catalogued; the image has {measured}")
    if expected.lower() in UNPINNED:
        return TCell(f"{expected} ({measured})", "unpinned", (), runs, f"unpinned; the image has {measured}")
    if version_matches(expected, measured):
        return TCell(expected, "ok", (), runs, f"measured {measured}")
    return TCell(f"⚠️ {expected} ≠ {measured}", "drift", (), runs,
                 f"catalog says {expected}, the image has {measured}")


def components_table(images: Sequence[CatalogImage],
                     inventory: dict[str, tuple[str, dict[str, str]]]) -> Table:
    """inventory: image alias → (run id, component → value) of its latest inventoried run."""
    body = []
    for img in images:
        run_id, found = inventory.get(img.alias, (None, {}))
        docker = img.reference + (f"@{img.digest[:19]}" if img.digest else "")
        cells = tuple(component_cell(str(img.components.get(key, "")), _measured(found, key) if found else None,
                                     run_id) for _h, key in COMPONENT_COLUMNS)
        body.append(TRow(img.alias, (docker,), cells))
    notes = ("Values from the image catalog; where an inventory of the image was measured, ⚠️ A ≠ B marks "
             "a component whose measured version (B) disagrees with the catalog (A), and an unpinned "
             "component shows the version found.",)
    return Table("components", "PyTorch Docker image components", ("Docker",),
                 tuple(h for h, _ in COMPONENT_COLUMNS), tuple(body), notes, 1)
