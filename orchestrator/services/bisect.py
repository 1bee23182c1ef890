"""valorch bisect: the first image, in a given order (nightlies), where a check went bad.

Each probe runs the one check in one image through the pipeline of ``valorch run``
(``services/pipeline.execute``: plan, host, executor, store; ``--repeat`` runs it that
many times), and reads its verdict over every attempt back from the store. The last image is run first (it must be bad, or
there is nothing to find); then a binary search over the first-bad position: at
most ⌈log₂ n⌉ + 1 runs for n images.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

from ..catalog.core import Catalog, load_job
from ..errors import InfrastructureError, InputError
from ..matrix.model import verdict
from ..regression.culprit import Suspect, rank
from ..spec import JobSpec, SuiteRef
from ..store import queries
from .pipeline import RunOptions, RunProgress, execute
from .placing import Where

GOOD = ("pass",)
BAD = ("fail", "crash", "timeout", "unsupported", "partial", "flaky")


@dataclass(frozen=True)
class Probe:
    image: str
    verdict: str
    run_id: str
    message: str = ""
    library: str | None = None  # the check's backend library, as the stored check names it
    feature: str = ""

    @property
    def bad(self) -> bool:
        return self.verdict in BAD


@dataclass(frozen=True)
class Bisection:
    images: tuple[str, ...]
    probes: tuple[Probe, ...]  # in the order they ran
    first_bad: str | None  # None: the last image is good, nothing went bad
    last_good: str | None  # None: bad from the first image on
    # the inventory diff last good -> first bad, most related first
    suspects: tuple[Suspect, ...] = ()
    culprit_note: str = ""  # why there is no ranking, or which inventories were compared

    @property
    def budget(self) -> int:
        return math.ceil(math.log2(len(self.images))) + 1 if self.images else 0


def search(images: Sequence[str], probe: Callable[[str], Probe]) -> Bisection:
    """Binary search for the first bad image, the last one known bad."""
    done: list[Probe] = []

    def test(i: int) -> bool:
        p = probe(images[i])
        done.append(p)
        return p.bad

    if not test(len(images) - 1):
        return Bisection(tuple(images), tuple(done), None, images[-1])
    lo, hi = -1, len(images) - 1  # lo: known good (-1: before the first), hi: known bad
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if test(mid):
            hi = mid
        else:
            lo = mid
    return Bisection(tuple(images), tuple(done), images[hi], images[lo] if lo >= 0 else None)


def suite_of(check: str, job: Path | None, catalog: Catalog) -> SuiteRef:
    """The suite that runs ``check``: a built-in check's own, or a suite a job declares."""
    from ..checks_manifest import manifest
    from ..scheduling.plan import suite_checks

    known: list[str] = []
    if job is not None:
        for ref in load_job(job, catalog).suites:
            ids = [c.id for c in suite_checks(ref)]
            if check in ids:
                return ref.model_copy(update={"checks": (check,), "attempts": 1})
            known += ids
    suite = manifest().suite_of(check)
    if suite is not None:
        return SuiteRef(name=suite, checks=(check,))
    known += list(manifest().checks)
    near = difflib.get_close_matches(check, known, n=3)
    raise InputError(
        f"unknown check '{check}'"
        + (" (not in the built-in suites nor in the job)" if job else ""),
        ("did you mean: " + ", ".join(near) + "? " if near else "")
        + "valorch suites show SUITE lists the checks; declared checks need --job FILE",
    )


def bisect(
    check: str,
    images: Sequence[str],
    *,
    catalog: Catalog,
    factory: sessionmaker[Session],
    progress: RunProgress,
    where: Where,
    job: Path | None = None,
) -> Bisection:
    """Run the check in as few of ``images`` as it takes to find the first bad one."""
    if len(images) < 2:
        raise InputError(
            f"bisect needs at least two images in order, got {len(images)}",
            "valorch bisect --check ID --images OLDEST ... NEWEST",
        )
    if len(set(images)) != len(images):
        raise InputError(
            "an image is named twice in --images", "name each image once, oldest first"
        )
    suite = suite_of(check, job, catalog)
    for name in images:
        catalog.resolve(name)  # an unknown image is exit 2 now, not after the first runs

    def probe(image: str) -> Probe:
        spec = JobSpec(name="bisect", images=(image,), suites=(suite,))
        _, summaries = execute(RunOptions(job=spec, where=where), catalog, factory, progress)
        if not summaries:
            raise InfrastructureError(f"no run of {image} came back", "see valorch results list")
        s = summaries[-1]
        with factory() as session:  # every attempt of every repeat: mixed ones are flaky
            attempts = [
                r
                for one in summaries
                for r in queries.run_results(session, one.run_id)
                if r.check.check_id == check
            ]
            run = queries.get_run(session, s.run_id)
            cpu_image = run is not None and str(run.image.backend) == "cpu"
        attempts.sort(key=lambda r: r.attempt)
        v = verdict(r.status for r in attempts)
        message = attempts[-1].message if attempts else "; ".join(s.infra_errors)
        if v == "error" or (not attempts and s.infra_errors):
            raise InfrastructureError(
                f"{check} is inconclusive in {image} (run {s.run_id[:8]}): {message[:300]}",
                "fix the infrastructure problem and bisect again",
            )
        if v not in GOOD and v not in BAD:
            raise InputError(
                f"{check} did not run in {image} ({v}: {message[:300]}); it cannot say good or bad",
                "bisect images where the check runs (a GPU check needs a GPU host)",
            )
        last = attempts[-1] if attempts else None
        return Probe(
            image,
            v,
            s.run_id,
            message,
            _ran_on(last, cpu_image),
            last.check.feature if last else "",
        )

    found = search(list(images), probe)
    if found.first_bad is None:
        p = found.probes[-1]
        raise InputError(
            f"{check} passes in the last image {images[-1]} (run {p.run_id[:8]}): every image is "
            "good as far as bisect can tell, there is no first bad image to find",
            "give the images oldest first, ending with one where the check fails",
        )
    suspects, note = culprits(check, found, catalog, factory)
    return replace(found, suspects=suspects, culprit_note=note)


def _ran_on(result: Any, cpu_image: bool) -> str | None:
    """The library a check's result ran on, for the culprit ranking: ``cpu`` for a CPU image
    or a result that ran on the CPU (the row's GPU label, hipBLAS/cuBLAS, says nothing
    there), else the check's backend library."""
    if result is None:
        return "cpu" if cpu_image else None
    if cpu_image or (result.device or "").startswith("cpu"):
        return "cpu"
    library: str | None = result.check.library
    return library


def culprits(
    check: str, found: Bisection, catalog: Catalog, factory: sessionmaker[Session]
) -> tuple[tuple[Suspect, ...], str]:
    """The components that changed between the last good and the first bad image (their
    inventories: stored ones of the same digest, else gathered now), ranked by relation to
    the check. An inventory that cannot be had is a note, never a failed bisect."""
    from ..audit import diff
    from . import inventory

    if found.last_good is None:
        return (), f"bad from the first image {found.first_bad} on: no good image to diff against"
    bad = next(p for p in found.probes if p.image == found.first_bad)  # bisect found one
    try:
        good_label, good = inventory.side(found.last_good, catalog, factory, stored=False)
        bad_label, bad_inv = inventory.side(bad.image, catalog, factory, stored=False)
    except (InfrastructureError, InputError) as exc:
        return (), f"no inventory diff: {exc.message}"
    changes = diff(good, bad_inv)
    if not changes:
        return (
            (),
            f"the inventories of {good_label} and {bad_label} are the same: the change is outside "
            "what the inventory sees (a file, a build flag) or on the host",
        )
    return tuple(
        rank(changes, check, bad.library, bad.feature)
    ), f"inventory diff {good_label} -> {bad_label}"
