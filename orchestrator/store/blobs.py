"""The JSON blobs the store keeps, each checked against the model it is read as.

A run's ``meta``, a task's ``suite_spec`` and ``timings``, a host's ``spec`` and a result's
``metrics`` are JSON columns: the store takes any JSON, but the code that reads them back
(resume, the site, triage, the inventory) expects one shape each. An import checks them
here before a row is written, and ``db check`` checks the rows already stored, so that a
wrong shape is named (the row, the field, the place inside) rather than a traceback in
``site build`` or ``run --resume`` later. Each function returns the problems, [] when none.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError

#: where a blob's problems are listed, at most this many each
MAX_PROBLEMS = 5


class _Open(BaseModel):
    """A shape with the keys its readers use typed, and others kept (a newer writer's)."""

    model_config = ConfigDict(extra="allow", frozen=True, strict=True, defer_build=True)


class _JobMeta(_Open):
    labels: list[str] = []


class _Preflight(_Open):
    ok: StrictBool | None = None
    reason: str = ""
    at: str = ""


class _Probe(_Open):
    nodes: list[dict[str, Any]] = []


class _SuiteMeta(_Open):
    probe: _Probe | None = None
    exit_code: StrictInt | None = None
    gpus: list[Any] = []


class _RunMeta(_Open):
    job: _JobMeta | None = Field(default=None, alias="_job")
    # the valorch process running it (executors/owner.py): a running run whose owner died
    # is shown abandoned
    owner: str | None = Field(default=None, alias="_owner", max_length=200)
    image: dict[str, str | StrictInt | StrictBool | None] = {}
    image_id: str | None = None
    index_digest: str | None = None
    platform_digest: str | None = None
    triaged: str | None = None
    host_facts: dict[str, str] = {}
    inventory_errors: list[str] = []
    preflight_after: _Preflight | None = None
    quarantined: list[dict[str, Any]] = []


_KNOWN = set(_RunMeta.model_fields) | {"_job", "_owner"}


def _validate(model: type[BaseModel], value: Any, prefix: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{prefix}: must be a JSON object, not {type(value).__name__}"]
    try:
        model.model_validate(value)
    except ValidationError as exc:
        out = []
        for err in exc.errors()[:MAX_PROBLEMS]:
            where = prefix + "".join(
                f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"] if p != "job"
            )
            msg = "required key is missing" if err["type"] == "missing" else err["msg"]
            out.append(f"{where}: {msg.removeprefix('Value error, ')}")
        return out
    except (RecursionError, ValueError, TypeError) as exc:
        return [f"{prefix}: {type(exc).__name__}"]
    return []


def run_meta(value: Any, prefix: str = "meta") -> list[str]:
    """A run's meta: the keys valorch writes typed; every other key is a suite's entry
    (``probe``, ``exit_code``, ``gpus``), so it is an object of that shape."""
    found = _validate(_RunMeta, value, prefix)
    if found or not isinstance(value, dict):
        return found
    for key, entry in value.items():
        if key not in _KNOWN:
            found += _validate(_SuiteMeta, entry, f"{prefix}.{key}")
    return found[:MAX_PROBLEMS]


def suite_spec(value: Any, prefix: str = "suite_spec") -> list[str]:
    """A task's suite as ``spec.SuiteRef`` reads it (resume rebuilds the task from it)."""
    from ..spec import SuiteRef

    return _validate(SuiteRef, value, prefix)


def host_spec(value: Any, prefix: str = "spec") -> list[str]:
    """A host's spec as ``spec.HostSpec`` reads it (resume places tasks on it)."""
    from ..spec import HostSpec

    return _validate(HostSpec, value, prefix)


def _finite(value: Any) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


def timings(value: Any, prefix: str = "timings") -> list[str]:
    """A task's timings: finite numbers by name."""
    if not isinstance(value, dict):
        return [f"{prefix}: must be a JSON object, not {type(value).__name__}"]
    return [
        f"{prefix}.{k}: must be a finite number, not {v!r}"
        for k, v in value.items()
        if isinstance(v, bool) or not isinstance(v, int | float) or not _finite(v)
    ][:MAX_PROBLEMS]


def metrics(value: Any, prefix: str = "metrics") -> list[str]:
    """A result's metrics: scalars by name, every number finite (JSON has no NaN)."""
    if not isinstance(value, dict):
        return [f"{prefix}: must be a JSON object, not {type(value).__name__}"]
    return [
        f"{prefix}.{k}: "
        + ("must be a finite number" if isinstance(v, float) else "must be a scalar")
        + f", not {v!r}"[:80]
        for k, v in value.items()
        if not _finite(v) or not (v is None or isinstance(v, str | int | float | bool))
    ][:MAX_PROBLEMS]


def finite(value: Any) -> Any:
    """``value`` with every non-finite float as JSON can carry it: the text ``NaN``,
    ``Infinity`` or ``-Infinity`` (what ``json.dumps`` would write, as a string), so that
    a measurement that overflowed stays visible and every sink stays valid JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def finite_numbers(values: Any) -> Any:
    """Samples or timings (a list or a dict of numbers) without their non-finite numbers:
    a NaN sample or duration measures nothing, and JSON cannot carry it."""
    if isinstance(values, dict):
        return {k: v for k, v in values.items() if _finite(v)}
    if isinstance(values, list | tuple):
        return [v for v in values if _finite(v)]
    return values
