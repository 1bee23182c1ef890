"""The layouts of `valorch matrix render --layout ...` (pure): stored observations,
run facts, catalog and inventory in; a matrix_doc.Table out. The hand-kept pages they
reproduce are named in docs/design.md, "The pages valorch replaces"."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from ..statuses import LEGEND
from ..words import count
from .document import Table, TCell, TRow
from .model import (
    SUPPORT_LEGEND,
    Cell,
    Matrix,
    Observation,
    RunInfo,
    build,
    by_feature,
    regroup,
)
from .seed import (
    measured_components,
    seed_features_table,
    since_cell,
    supported_features,
)
from .tiers import COUNTED, TIERS, Policy, tiers

LAYOUTS = (
    "checks",
    "features",
    "seed-features",
    "since",
    "components",
    "libraries",
    "summary",
    "tiers",
)
ROWS = ("features", "checks")
COLUMNS = ("images", "backends", "hosts")
# (header, catalog key) of the seed's "PyTorch Docker image components" table
COMPONENT_COLUMNS = (
    ("PyTorch", "pytorch"),
    ("Ubuntu", "ubuntu"),
    ("Python", "python"),
    ("Apex", "apex"),
    ("torchvision", "torchvision"),
    ("TensorBoard", "tensorboard"),
    ("MAGMA", "magma"),
    ("UCX", "ucx"),
    ("OMPI", "ompi"),
    ("OFED", "ofed"),
)
SINCE_COLUMNS = (("Since PyTorch", "pytorch"), ("Since ROCm", "rocm"))


@dataclass(frozen=True)
class CatalogImage:
    alias: str
    reference: str
    digest: str | None
    components: dict[str, str]


def grid(
    observations: Iterable[Observation],
    runs: Sequence[RunInfo],
    rows: str = "checks",
    columns: str = "images",
) -> Matrix:
    """Observations keyed by run id as column → rows × (images | backends | hosts)."""
    per_run = build(observations, [r.run_id for r in runs])
    m = regroup(per_run, columns={r.run_id: r.group(columns) for r in runs})
    return by_feature(m) if rows == "features" else m


def _tcell(cell: Cell, text: str | None = None) -> TCell:
    return TCell(
        cell.text if text is None else text,
        cell.verdict,
        cell.statuses,
        cell.runs,
        cell.message,
        _day(cell.when) if cell.when else "",
        cell.flags,
    )


@lru_cache(maxsize=4096)
def _day(when: datetime) -> str:
    return when.strftime("%Y-%m-%d")  # one per run, not per cell


def _labels(m: Matrix, rows: str) -> tuple[tuple[str, ...], int, Any]:
    if rows == "features":
        return ("Feature",), 0, lambda r: (r.key,)
    return ("Check", "Feature", "Library"), 1, lambda r: (r.key, r.feature, r.library or "")


def checks_table(
    obs: Sequence[Observation], runs: Sequence[RunInfo], rows: str, columns: str
) -> Table:
    m = grid(obs, runs, rows, columns)
    heads, literal, labels = _labels(m, rows)
    body = tuple(
        TRow(r.key, labels(r), tuple(_tcell(m.cell(r.key, c)) for c in m.columns)) for r in m.rows
    )
    kind = "features" if rows == "features" else "checks"
    title = f"{kind.capitalize()} by {columns[:-1]}"
    notes = (LEGEND,) if rows == "checks" else (LEGEND, FEATURE_NOTE)
    return Table(kind, title, heads, m.columns, body, notes, literal)


#: the note under a features table: how its checks make a feature's cell (model.combine)
FEATURE_NOTE = (
    "A feature combines the checks that evidence it: "
    "all pass ✅, any failing ❌ (or unsupported ⊘), otherwise partial ⚠️ or inconclusive ⁇."
)


def since_table(obs: Sequence[Observation], runs: Sequence[RunInfo], rows: str) -> Table:
    obs = list(obs)
    m = grid(obs, runs, rows, "images")
    comps, catalogued = measured_components(obs, runs)
    heads, literal, labels = _labels(m, rows)
    body = tuple(
        TRow(
            r.key,
            labels(r),
            tuple(since_cell(m, r.key, key, comps, catalogued) for _h, key in SINCE_COLUMNS),
        )
        for r in m.rows
    )
    note = (
        "Since: the oldest version (of the images' pytorch / rocm components as their version rows "
        "measured them, else as catalogued) whose newest "
        "verdict passes, every newer version tested passing too (⚠️: partial support in that range); "
        "≤ X: passes in every version tested, none older than X was tested; —: does not pass in the "
        "newest version tested, or never tested. The cell's note lists the versions measured."
    )
    return Table(
        "since",
        "Feature support by version",
        heads,
        tuple(h for h, _ in SINCE_COLUMNS),
        body,
        (note,),
        literal,
    )


def summary_table(obs: Sequence[Observation], runs: Sequence[RunInfo]) -> Table:
    """The seed's "Supported features": a feature, its description (from the check catalog)
    and, per backend, its best-evidenced state over that backend's images."""
    m, _checks, heads, cells_of = supported_features(obs, runs, lambda check: True)
    backend_of = {r.image: r.backend for r in runs}
    body = tuple(
        TRow(r.key, (r.key, cells_of[r.key][0]), tuple(cells_of[r.key][1])) for r in m.rows
    )
    notes = (
        f"{SUPPORT_LEGEND}; a backend's cell is its best-evidenced state: ✅ where some image of the backend passes · "
        f"over {count(len(m.columns), 'image')}: {', '.join(f'{c} ({backend_of[c]})' for c in m.columns)}",
    )
    return Table("summary", "Supported features", ("Features", "Description"), heads, body, notes)


def tiers_table(
    obs: Sequence[Observation], runs: Sequence[RunInfo], columns: str, policy: Policy
) -> Table:
    """support-tiers-compatibility-matrix.md's shape: platform, tier, scope and notes, each
    claim counted from the verdicts (the tier is the only badge of a row)."""
    m = grid(obs, runs, "checks", "images")
    groups: dict[str, list[Cell]] = {}
    scope: dict[str, dict[str, list[int]]] = {}
    group_of = {r.image: r.group(columns) for r in runs}
    # an image with no verdict (an inventory-only run) claims nothing
    said = {c for (_r, c) in m.cells}
    for image in (c for c in m.columns if c in said):
        g = group_of[image]
        for r in m.rows:
            cell = m.cell(r.key, image)
            groups.setdefault(g, []).append(cell)
            if cell.verdict in COUNTED:
                n = scope.setdefault(g, {}).setdefault(r.key.split(".", 1)[0], [0, 0])
                n[0], n[1] = n[0] + (cell.verdict == "pass"), n[1] + 1
    body = []
    ended = {r.run_id: r.ended for r in runs}
    dated = {g: [c.when for c in cells if c.when] for g, cells in groups.items()}
    for t in sorted(tiers(groups, policy, ended), key=lambda t: TIERS.index(t.tier)):
        when = _day(min(dated[t.group])) if dated.get(t.group) else ""
        images = sorted({r.image for r in runs if r.group(columns) == t.group})
        hosts = sorted({r.host for r in runs if r.group(columns) == t.group})
        suites = ", ".join(f"{s} ({p}/{n} pass)" for s, (p, n) in scope.get(t.group, {}).items())
        notes = (
            f"pass rate {t.rate:.1%} ({t.passed} of {t.counted} checks with a verdict), "
            f"{count(t.crashes, 'crash or timeout', 'crashes or timeouts')}; {count(len(images), 'image')} on {', '.join(hosts)}"
            + (f"; {t.short}" if t.short else "")
        )
        # a tier named "unsupported" is not the status unsupported (not installed)
        verdict = "unsupported-tier" if t.tier == "unsupported" else t.tier
        body.append(
            TRow(
                t.group,
                (t.group,),
                (
                    TCell(t.tier, verdict, (), t.runs, "", when),
                    TCell(suites or "no check with a verdict", "", (), t.runs),
                    TCell(notes, "", (), t.runs, ", ".join(images)),
                ),
            )
        )
    head = {"images": "Image", "backends": "Platform", "hosts": "Host"}[columns]
    return Table(
        "tiers",
        "Support tiers",
        (head,),
        ("Tier", "Scope", "Notes"),
        tuple(body),
        (policy.describe(),),
    )


NO_INVENTORY = "no-inventory"  # a components cell of an image whose inventory was never taken


def _measured(inventory: dict[str, str], key: str) -> str | None:
    for name in (key, "pip:" + key, "deb:" + key):
        if name in inventory:
            return inventory[name]
    return None


def component_cell(
    expected: str, measured: str | None, run_id: str | None, broken: str | None = None
) -> TCell:
    """``broken``: the import error of a package the inventory found installed but failing
    to import: never shown as a version that works."""
    runs = (run_id,) if run_id and measured is not None else ()
    if measured is None and not expected:
        return TCell("")  # neither catalogued nor measured: nothing to say, nothing expected
    if measured is None:
        said = (
            "not found in the measured inventory"
            if run_id
            else "no inventory of this image was measured (valorch inventory audit stores one)"
        )
        return TCell(expected, "catalog" if run_id else NO_INVENTORY, (), (), f"catalogued; {said}")
    from ..components import UNPINNED, version_matches  # pydantic's: only where a row compares

    has = f"the image has {measured}"
    if broken is not None:
        note = f"installed but does not import: {broken}"[:500]
        text, verdict = f"{measured} (does not import)", "broken"
    elif not expected:
        text, verdict, note = measured, "measured", f"not catalogued; {has}"
    elif expected.lower() in UNPINNED:
        text, verdict, note = f"{expected} ({measured})", "unpinned", f"unpinned; {has}"
    elif version_matches(expected, measured):
        text, verdict, note = expected, "ok", f"measured {measured}"
    else:
        text, verdict, note = f"{expected} ≠ {measured}", "drift", f"catalog says {expected}, {has}"
    return TCell(text, verdict, (), runs, note)


def components_table(
    images: Sequence[CatalogImage],
    inventory: dict[str, tuple[str, dict[str, str]]],
    by_digest: dict[str, tuple[str, dict[str, str]]] | None = None,
    broken: dict[str, dict[str, str]] | None = None,
) -> Table:
    """inventory: image alias → (run id, component → value) of its latest inventoried run;
    ``by_digest`` the same by image digest or reference (an inventory taken under another
    alias of the image); ``broken``: run id → component → import error."""
    body = []
    for img in images:
        had = (
            inventory.get(img.alias)
            or (by_digest or {}).get(img.digest or "")
            or (by_digest or {}).get(img.reference)
        )
        run_id, found = had if had is not None else (None, {})
        errors = (broken or {}).get(run_id or "", {})
        docker = img.reference + (f"@{img.digest[:19]}" if img.digest else "")
        cells = tuple(
            component_cell(
                str(img.components.get(key, "")),
                _measured(found, key) if found else None,
                run_id,
                _measured(errors, key),
            )
            for _h, key in COMPONENT_COLUMNS
        )
        body.append(TRow(img.alias, (docker,), cells))
    notes = (
        "Values from the image catalog; where an inventory of the image was measured, A ≠ B marks "
        "a component whose measured version (B) disagrees with the catalog (A), and an unpinned "
        "component shows the version found.",
    )
    return Table(
        "components",
        "PyTorch Docker image components",
        ("Docker",),
        tuple(h for h, _ in COMPONENT_COLUMNS),
        tuple(body),
        notes,
        1,
    )


def observed_table(
    layout: str,
    obs: Sequence[Observation],
    runs: Sequence[RunInfo],
    rows: str,
    columns: str,
    policy: Policy,
) -> Table:
    """The table of a layout drawn from observations (every layout but components and libraries)."""
    if layout in ("checks", "features"):
        return checks_table(obs, runs, "features" if layout == "features" else rows, columns)
    if layout == "seed-features":
        return seed_features_table(obs, runs)
    if layout == "since":
        return since_table(obs, runs, rows)
    if layout == "summary":
        return summary_table(obs, runs)
    return tiers_table(obs, runs, columns, policy)
