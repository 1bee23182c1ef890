"""The seed pages' own shape (pure): rocm-pytorch-compatibility.rst and
rocm-pytorch-feature-summary.rst cut their features into sections (tensor data types,
torch.cuda, torch.backends, AMP, distributed, torch.compiler, domain libraries ...) and give
each a Description, a Supported mark and the versions it is supported since. Every cell
here comes from stored verdicts and names the runs behind it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from ..render.sections import SECTION
from ..statuses import NOT_APPLICABLE, SYMBOL
from .document import Table, TCell, TRow
from .model import SUPPORT_LEGEND, Cell, Matrix, Observation, build, by_feature, combine, regroup
from .since import since_of

if TYPE_CHECKING:
    from datetime import datetime

    from .model import RunInfo

# (section title, check id prefixes), in the seed page's order; the longest prefix decides
SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Tensor data types", ("features.dtype.",)),
    ("torch.cuda", ("features.cuda.", "smoke.device")),
    ("torch.backends.cuda", ("features.backends.",)),
    ("torch.backends.cudnn", ("features.backends.cudnn_",)),
    ("Automatic mixed precision: torch.amp", ("features.amp.",)),
    ("Distributed library features", ("features.distributed.", "kernels.all_reduce.")),
    ("torch.compiler", ("compile.",)),
    ("torchvision", ("features.torchvision.",)),
    ("torchaudio", ("features.torchaudio.",)),
    (
        "Domain libraries",
        ("features.torchtext", "features.torchtune", "features.torchserve", "features.torchrec"),
    ),
    ("Extensions", ("features.apex.", "features.torch_tensorrt")),
    ("Critical ROCm libraries", ("features.rocm.",)),
    ("Operators on the device", ("kernels.", "smoke.matmul", "smoke.tensor_add")),
    ("Profiling", ("profiler.",)),
    ("TensorFlow", ("tf.",)),
)
OTHER = "Other checks"
# not features of the framework: the harness's self-test and the catalog's version checks
LEFT_OUT = ("selftest.", "env.")
BACKEND_SINCE = (("Since ROCm", "rocm"), ("Since CUDA", "cuda"))
BEST = ("pass", "partial", "flaky", "xfail", "error")


def section_of(check: str) -> str | None:
    """The seed section of a check id; None for the harness's own checks."""
    if check.startswith(LEFT_OUT):
        return None
    found = [
        (len(p), title) for title, prefixes in SECTIONS for p in prefixes if check.startswith(p)
    ]
    return max(found)[1] if found else OTHER


def _first_sentence(text: str) -> str:
    """The description's first sentence, up to its first "; " outside parentheses: a
    parenthesis is never cut open ("(prefix match; a pre-release …)" stays whole)."""
    parts = re.split(r"(?<=[a-z0-9)\]])\.\s+(?=[A-Z(])", " ".join(text.split()), maxsplit=1)
    sentence = _before_clause(parts[0]).rstrip(".")
    return sentence + "." if sentence else ""


def _before_clause(text: str) -> str:
    depth = 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth <= 0 and text.startswith("; ", i):
            return text[:i]
    return text


def descriptions(checks: Iterable[str]) -> dict[str, str]:
    """check id → the first sentence of its catalog description ("" for a check the
    built-in catalog does not know, e.g. a job's declared command check)."""
    from ..checks_manifest import manifest

    known = manifest().checks
    said = {check: known[check]["description"] if check in known else "" for check in checks}
    return {check: _first_sentence(text) if text else "" for check, text in said.items()}


def best(cells: Iterable[Cell]) -> Cell:
    """The best-evidenced state of several images (of one backend): pass where one passes,
    partial where the best is partial, then the inconclusive ones; failing only where every
    image that said something fails. The chosen cell keeps its own runs (its evidence)."""
    cells = list(cells)
    for verdict in BEST:
        chosen = next((c for c in cells if c.verdict == verdict), None)
        if chosen is not None:
            return chosen
    return combine(cells)


def best_by_backend(
    per_image: Matrix, backend_of: dict[str, str]
) -> tuple[tuple[str, ...], dict[tuple[str, str], Cell]]:
    """(backends in order, {(row, backend): best cell over that backend's images}). An image
    with no verdict at all (e.g. a run that only took an inventory) speaks for no backend."""
    said = {c for (_r, c) in per_image.cells}
    backends = tuple(dict.fromkeys(backend_of[c] for c in per_image.columns if c in said))
    cells = {
        (r.key, b): best(per_image.cell(r.key, c) for c in per_image.columns if backend_of[c] == b)
        for r in per_image.rows
        for b in backends
    }
    return backends, cells


def supported_cell(cell: Cell, checks: Sequence[str]) -> TCell:
    text = (
        SYMBOL[cell.verdict]
        if cell.verdict not in ("skip", NOT_APPLICABLE, "missing")
        else ("—" if cell.verdict == "missing" else "")
    )
    note = f"{cell.verdict} ({', '.join(cell.statuses)})" if cell.statuses else "not run"
    return TCell(
        text,
        cell.verdict,
        cell.statuses,
        cell.runs,
        f"{note}; checks: {', '.join(checks)}",
        _day(c.when for c in (cell,)),
    )


def _day(whens: Iterable[datetime | None]) -> str:
    """The oldest evidence of some cells, YYYY-MM-DD ("" when none is dated): what the
    freshness count of the header reads."""
    dated = [w for w in whens if w is not None]
    return min(dated).strftime("%Y-%m-%d") if dated else ""


def measured_components(
    obs: Iterable[Observation], runs: Sequence[RunInfo]
) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """The images' components as their version rows measured them (``env.version.<name>``'s
    value, newest run first, without a local build tag: "2.6.0+cu124" counts as 2.6.0), over the
    catalogued ones; and, per image, the catalogued value where the measurement differs."""
    image_of = {r.run_id: r.image for r in runs}
    newest: dict[tuple[str, str], tuple[str, str]] = {}
    for o in obs:
        if o.check.startswith("env.version.") and o.value and o.run_id in image_of:
            key = (image_of[o.run_id], o.check[len("env.version.") :])
            when = o.when.isoformat() if o.when else ""
            if key not in newest or when > newest[key][0]:
                newest[key] = (when, o.value.split("+", 1)[0].strip())
    merged = {r.image: dict(r.components) for r in runs}
    catalogued: dict[str, dict[str, str]] = {}
    for (image, name), (_when, value) in newest.items():
        was = merged.setdefault(image, {}).get(name)
        if was and was != value:
            catalogued.setdefault(image, {})[name] = was
        merged[image][name] = value
    return merged, catalogued


def since_cell(
    m: Matrix,
    row: str,
    component: str,
    comps: dict[str, dict[str, str]],
    catalogued: dict[str, dict[str, str]] | None = None,
) -> TCell:
    """Since <component> for one row, from the images that have that component (measured
    versions where the version rows measured them; the catalogued one is noted where it differs)."""
    points, used, differ = [], [], []
    for image in m.columns:
        cell = m.cell(row, image)
        version = comps.get(image, {}).get(component)
        was = (catalogued or {}).get(image, {}).get(component)
        if version and was:
            differ.append(f"{image}: measured {version}, catalogued {was}")
        if version and cell.verdict not in ("skip", NOT_APPLICABLE, "missing", "error", "xfail"):
            points.append((str(version), "partial" if cell.verdict == "flaky" else cell.verdict))
            used.append(cell)
    found = since_of(points)
    evidence = ", ".join(f"{v} {SYMBOL.get(s, s)}" for v, s in points)
    runs = tuple(sorted({r for c in used for r in c.runs}))
    verdict = (
        ("partial" if found.partial else "pass")
        if found.version
        else ("fail" if points else "missing")
    )
    return TCell(
        found.text,
        verdict,
        tuple(c.verdict for c in used),
        runs,
        found.note
        + (f" ({evidence})" if evidence else "")
        + (f"; {'; '.join(differ)}" if differ else ""),
        _day(c.when for c in used),
    )


def supported_features(
    obs: Sequence[Observation], runs: Sequence[RunInfo], keep: Callable[[str], bool]
) -> tuple[Matrix, dict[str, list[str]], tuple[str, ...], dict[str, tuple[str, list[TCell]]]]:
    """The per-image grid by feature; each feature's checks (those ``keep`` takes); the
    "Supported" column heads, one per backend; and per feature its description and those
    columns' cells, each the best-evidenced state over the backend's images."""
    per_check = regroup(
        build(obs, [r.run_id for r in runs]), columns={r.run_id: r.image for r in runs}
    )
    checks_of: dict[str, list[str]] = {}
    for r in per_check.rows:
        if keep(r.key):
            checks_of.setdefault(r.feature or r.key, []).append(r.key)
    m = by_feature(per_check)
    backends, best_cells = best_by_backend(m, {r.image: r.backend for r in runs})
    heads = ("Supported",) if len(backends) == 1 else tuple(f"Supported ({b})" for b in backends)
    described = descriptions(r.key for r in per_check.rows)
    cells = {  # a feature's description is its first check's that the catalog describes
        f: (
            next((described[c] for c in checks if described.get(c)), ""),
            [supported_cell(best_cells[(f, b)], checks) for b in backends],
        )
        for f, checks in checks_of.items()
    }
    return m, checks_of, heads, cells


def seed_features_table(obs: Sequence[Observation], runs: Sequence[RunInfo]) -> Table:
    """runs: model.RunInfo (run id, image, backend, the image's catalogued components)."""
    backend_of = {r.image: r.backend for r in runs}
    obs = list(obs)
    comps, catalogued = measured_components(obs, runs)
    m, checks_of, supported, cells_of = supported_features(
        obs, runs, lambda check: section_of(check) is not None
    )
    section = {f: section_of(checks[0]) or "" for f, checks in checks_of.items()}
    since_cols = [("Since PyTorch", "pytorch")] + [
        (h, k) for h, k in BACKEND_SINCE if any(k in comps.get(i, {}) for i in m.columns)
    ]
    order = {title: i for i, (title, _) in enumerate(SECTIONS)}
    rows = sorted(
        (r for r in m.rows if r.key in section), key=lambda r: order.get(section[r.key], len(order))
    )
    body = []
    for r in rows:
        text, cells = cells_of[r.key]
        cells += [since_cell(m, r.key, key, comps, catalogued) for _h, key in since_cols]
        body.append(TRow(r.key, (section[r.key], r.key, text), tuple(cells)))
    images = ", ".join(f"{i} ({backend_of[i]})" for i in m.columns)
    notes = (
        f"{SUPPORT_LEGEND}. Supported: the best-evidenced state over the images of a backend (✅ where some image passes).",
        "Since: the oldest version whose newest verdict passes, with every newer version tested passing; "
        "≤ X: passes in every version tested, none older than X was tested; —: does not pass in the "
        "newest version tested, or not tested.",
        f"Images: {images}.",
    )
    return Table(
        "seed-features",
        "Supported features",
        (SECTION, "Feature", "Description"),
        (*supported, *(h for h, _ in since_cols)),
        tuple(body),
        notes,
    )
