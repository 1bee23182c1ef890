"""Every numeric field of every model is bounded by what its sink accepts: SQLite's and
PostgreSQL's integers, ``datetime``/``timedelta``, the kernel's gid range, exit statuses.

Two properties: each int/float field of each model (spec.py, known issues, the export
schema) declares a lower and an upper bound inside 64 bits (and floats refuse inf/nan); and
hypothesis, over values from far below to far above 64 bits, finds that a model either
refuses a value at load (ValidationError) or keeps one inside those bounds."""

from __future__ import annotations

import math
import typing

import annotated_types as at
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from orchestrator import spec
from orchestrator.bounds import INT64_MAX, INT64_MIN
from orchestrator.regression import known_issues
from orchestrator.store import export_schema

#: a valid instance of each model with numeric fields, minus the field under test
BASE: dict[type[BaseModel], dict[str, typing.Any]] = {
    spec.GPU: {"vendor": "amd", "arch": "gfx942", "index": 0},
    spec.HostSpec: {"name": "h"},
    spec.CommandSpec: {"id": "x", "argv": ["true"]},
    spec.PytestSpec: {"path": "t.py"},
    spec.SuiteRef: {"name": "smoke"},
    spec.CheckInfo: {"id": "x", "feature": "f", "kind": "feature"},
    spec.CheckResult: {"check": "x", "status": "pass"},
}
#: fields whose numbers are no quantity a sink keeps (kept as they are, JSON text)
FREE = {"metrics", "samples", "timings"}


def _models() -> list[type[BaseModel]]:
    found = []
    for module in (spec, known_issues, export_schema):
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and issubclass(obj, BaseModel)
                and obj.__module__ == (module.__name__)
            ):
                found.append(obj)
    return found


def _numeric(annotation: typing.Any) -> str | None:
    args = typing.get_args(annotation) or (annotation,)
    names = {getattr(a, "__name__", str(a)) for a in args}
    if names & {"int", "StrictInt"} and not names & {"str", "dict", "tuple"}:
        return "int"
    if names & {"float", "StrictFloat"} and not names & {"str", "dict", "tuple"}:
        return "float"
    return None


def _bounds(field) -> tuple[float | None, float | None, bool]:
    low = high = None
    finite = False
    for m in field.metadata:
        if isinstance(m, (at.Ge, at.Gt)):
            low = getattr(m, "ge", getattr(m, "gt", None))
        if isinstance(m, (at.Le, at.Lt)):
            high = getattr(m, "le", getattr(m, "lt", None))
        if getattr(m, "allow_inf_nan", None) is False:
            finite = True
    return low, high, finite


FIELDS = [
    (model, name, kind, field)
    for model in _models()
    for name, field in model.model_fields.items()
    if name not in FREE and (kind := _numeric(field.annotation))
]


@pytest.mark.parametrize(
    "model,name,kind,field", FIELDS, ids=[f"{m.__name__}.{n}" for m, n, _, _ in FIELDS]
)
def test_every_numeric_field_declares_bounds_inside_64_bits(model, name, kind, field):
    low, high, finite = _bounds(field)
    assert low is not None and high is not None, f"{model.__name__}.{name} is unbounded"
    assert INT64_MIN <= low <= high <= INT64_MAX
    if kind == "float" and high > 1e15:
        assert finite, f"{model.__name__}.{name} accepts inf or nan"


WIDE = st.one_of(
    st.integers(min_value=-(2**80), max_value=2**80),
    st.sampled_from([0, -1, 1, INT64_MAX, INT64_MAX + 1, INT64_MIN - 1, 10**23]),
    st.floats(allow_nan=True, allow_infinity=True),
)
LOADABLE = [(m, n, k, f) for m, n, k, f in FIELDS if m in BASE]


@pytest.mark.parametrize(
    "model,name,kind,field", LOADABLE, ids=[f"{m.__name__}.{n}" for m, n, _, _ in LOADABLE]
)
@given(value=WIDE)
def test_a_number_is_refused_at_load_or_kept_inside_its_bounds(model, name, kind, field, value):
    low, high, _ = _bounds(field)
    try:
        obj = model.model_validate({**BASE[model], name: value})
    except ValidationError:
        return
    got = getattr(obj, name)
    assert low <= got <= high
    if isinstance(got, float):
        assert math.isfinite(got)
