"""A run stored with its results, as `valorch run` would leave it, for the tests that build
a store of known content (sites, diffs, sinks): the same arguments of queries.start_run
wherever they are not the point of the test."""

from __future__ import annotations

from collections.abc import Iterable

from orchestrator.spec import CheckResult, HostSpec, ImageSpec
from orchestrator.store import queries
from orchestrator.store.models import Run

DIGEST = "sha256:" + "a" * 64


def stored_run(
    session,
    image: ImageSpec,
    results: Iterable[CheckResult],
    *,
    batch: str | None = None,
    job: str = "nightly",
    host: HostSpec | None = None,
    digest: str = DIGEST,
) -> Run:
    """A docker run of ``image`` on ``host`` (h1) holding ``results``; not committed."""
    run = queries.start_run(
        session,
        batch=batch or queries.now().isoformat(),
        job=job,
        image=image,
        digest=digest,
        host=host or HostSpec(name="h1"),
        executor="docker",
        spec_hash="abc",
        cpu_only=False,
        suites=[],
    )
    queries.add_results(session, run.id, None, list(results))
    return run
