"""Job-spec fields that would have no effect where the job runs: one table, checked with
the job's images chosen (``jobcheck``), before anything is planned, run or stored.

A suite's container limits (``memory``, ``cpus``), ``profiling_caps`` and ``network: true``
act on a probe container only. On a job whose every image is ``host`` (the local
interpreter: no container) they would be silently ignored: a mistake of the job spec
naming the file, line and key, why it does nothing and what to do (exit 2). A field left
out, or written with its default value, is never refused. ``pass_env`` (the other way
round: it acts on ``host`` only) is ``catalog.jobcheck._pass_env_applies``.
docs/input-validation.md lists every rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import yamlio
from ..spec import ImageSpec, JobSpec, SuiteRef


def _no_container(images: Sequence[ImageSpec]) -> bool:
    return bool(images) and all(image.executor == "host" for image in images)


@dataclass(frozen=True)
class FieldRule:
    """A suite's ``key`` has no effect when it is set (not its default) and
    ``inert(images)`` holds for the job's chosen images; ``example`` is the value the docs
    and the test write."""

    key: str
    inert: Callable[[Sequence[ImageSpec]], bool]
    why: str  # completes "key 'suites.N.KEY' has no effect ..."
    hint: str
    example: Any


_ONLY_HOST = "on a job whose only image is host (the local interpreter runs no container"
_ADD_IMAGE = "or add a container image to the job"

FIELD_RULES: tuple[FieldRule, ...] = (
    FieldRule(
        "memory",
        _no_container,
        f"{_ONLY_HOST}, so no container memory limit applies)",
        f"remove memory, {_ADD_IMAGE}",
        "4g",
    ),
    FieldRule(
        "cpus",
        _no_container,
        f"{_ONLY_HOST}, so no container CPU limit applies)",
        f"remove cpus, {_ADD_IMAGE}",
        2,
    ),
    FieldRule(
        "network",
        _no_container,
        f"{_ONLY_HOST} to cut off: a workload there always has this machine's network)",
        f"remove network, {_ADD_IMAGE}",
        True,
    ),
    FieldRule(
        "profiling_caps",
        _no_container,
        f"{_ONLY_HOST} to grant capabilities to: the profiler has what the user running "
        "valorch has)",
        f"remove profiling_caps, {_ADD_IMAGE}",
        True,
    ),
)


def _is_set(suite: SuiteRef, key: str) -> bool:
    return getattr(suite, key) != SuiteRef.model_fields[key].default


def _written(doc: yamlio.Document, i: int, key: str) -> bool:
    suites = doc.data.get("suites") if isinstance(doc.data, dict) else None
    entry = suites[i] if isinstance(suites, list) and i < len(suites) else None
    return isinstance(entry, dict) and key in entry


def check_fields(
    job: JobSpec, doc: yamlio.Document, images: Sequence[ImageSpec]
) -> list[tuple[tuple[str | int, ...], str, str]]:
    """Each suite field the job's images would ignore: (its place, what, what to do)."""
    return [
        (("suites", i, rule.key), f"has no effect {rule.why}", rule.hint)
        for rule in FIELD_RULES
        if rule.inert(images)
        for i, suite in enumerate(job.suites)
        if _is_set(suite, rule.key) and _written(doc, i, rule.key)
    ]
