"""The results export, fuzzed field by field, and every run valorch can store round-tripped.

- A real export (tests/corpus/files/good_export.json) with one field (any depth: a key of a
  row, a key inside a run's meta, a task's suite definition, a host's spec) swapped for a
  hostile value (another type, a format's near miss, NaN and infinities, deep nesting, an
  oversized string, control characters, a shell substitution) or deleted: the import either
  stores it, and what it stored exports and validates again, or refuses it with
  TransferError naming the row the field is in, and stores nothing. Never another exception.
- Every run valorch can store (results with any text, NaN and infinite metrics and samples)
  exports to valid JSON (no NaN) that the import takes.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from orchestrator.spec import CheckResult, ImageSpec
from orchestrator.store import transfer
from orchestrator.store.db import open_engine, session_factory
from orchestrator.store.models import Run
from tests.store_helpers import stored_run

GOOD = Path(__file__).resolve().parents[1] / "corpus" / "files" / "good_export.json"
SEED = GOOD.read_text()

HOSTILE = [
    None,
    True,
    0,
    -1,
    2**70,
    1e308,
    float("nan"),
    float("inf"),
    float("-inf"),
    "",
    "x" * 70_000,
    "sha256:$(touch /tmp/pwned)",
    "sha256:" + "A" * 64,
    "sha512:" + "0" * 64,
    "../../etc/passwd",
    "a b; rm -rf /",
    "host",
    "\x1b[2J\x1b]8;;http://evil.example\x1b\\",
    "\u202eevil",
    "line\u2028two",
    "\x00",
    "1999-01-01T00:00:00",
    [],
    [1, [2]],
    {},
    {"a": {"b": [float("nan")]}},
    {"gpus": ["x"]},
    {"commands": 5},
]


def _deep(n: int) -> list:
    out: list = []
    for _ in range(n):
        out = [out]
    return out


def _spots(data, path=()):
    """Every (path, container, key) of the document, depth first."""
    if isinstance(data, dict):
        for k in list(data):
            yield (*path, k), data, k
            yield from _spots(data[k], (*path, k))
    elif isinstance(data, list):
        for i in range(len(data)):
            yield (*path, i), data, i
            yield from _spots(data[i], (*path, i))


def _row_of(path) -> str:
    """The row a field is in, as the import names it: ``runs[0]``, or a top-level key."""
    if len(path) >= 2 and isinstance(path[1], int):
        return f"{path[0]}[{path[1]}]"
    return str(path[0])


@st.composite
def mutated(draw):
    doc = json.loads(SEED)
    spots = list(_spots(doc))
    path, container, key = draw(st.sampled_from(spots))
    op = draw(st.sampled_from(["swap", "swap", "swap", "delete", "deep"]))
    if op == "delete":
        del container[key]
    elif op == "deep":
        # as deep as json.loads goes (read_export names a deeper document: exit 2)
        container[key] = {"k": _deep(draw(st.integers(50, 900)))}
    else:
        container[key] = copy.deepcopy(draw(st.sampled_from(HOSTILE)))
    return Case(doc, path, op)


class Case(tuple):
    """(document, path, operation), shown by its path and operation (a deep value has no
    readable repr)."""

    def __new__(cls, doc, path, op):
        return super().__new__(cls, (doc, path, op))

    def __repr__(self) -> str:
        return f"Case(path={self[1]!r}, op={self[2]!r})"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    engine = open_engine(str(tmp_path_factory.mktemp("fuzz") / "fuzz.sqlite"))
    yield session_factory(engine)
    engine.dispose()


def _runs(session) -> int:
    return session.scalar(select(func.count()).select_from(Run))


def test_the_seed_export_imports():
    assert transfer.validate_export(json.loads(GOOD.read_text()))["format"] == "valorch-results"


@settings(
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=mutated())
def test_a_mutated_export_is_stored_whole_or_refused_naming_its_row(case, store):
    doc, path, _op = case
    with store() as session:
        try:
            transfer.import_runs(session, doc, "fuzz:export.json")
        except transfer.TransferError as exc:
            text = str(exc)
            # the row (or the reference into it) is named; not a word about Python
            assert _row_of(path) in text or 'one of "' in text or "export" in text, (
                path,
                text,
            )
            assert "Traceback" not in text
            assert _runs(session) == 0
            return
        # stored: what was stored exports to valid JSON that validates again
        runs = list(session.scalars(select(Run)))
        again = json.loads(json.dumps(transfer.export_runs(session, runs), allow_nan=False))
        transfer.validate_export(again)
        session.rollback()


FLOATS = st.floats(allow_nan=True, allow_infinity=True)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), FLOATS, st.text())


@st.composite
def results(draw):
    out = []
    for attempt in range(1, draw(st.integers(1, 3)) + 1):
        try:
            out.append(
                CheckResult(
                    check=draw(st.from_regex(r"\A[a-z][a-z0-9_]{0,8}\.[a-z0-9_.:\-]{1,20}\Z")),
                    status=draw(st.sampled_from(["pass", "fail", "error", "skip", "partial"])),
                    attempt=attempt,
                    feature=draw(st.text(max_size=300)),
                    device=draw(st.none() | st.text(max_size=200)),
                    library=draw(st.none() | st.text(max_size=200)),
                    unit=draw(st.none() | st.text(max_size=40)),
                    duration_s=draw(st.floats(0, 1e7)),
                    message=draw(st.text(max_size=200)),
                    log=draw(st.text(max_size=200)),
                    metrics=draw(st.dictionaries(st.text(max_size=100), SCALARS, max_size=5)),
                    samples=tuple(draw(st.lists(FLOATS, max_size=5))),
                )
            )
        except ValueError:  # what the probe's own output model refuses never reaches a store
            continue
    return out


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(stored=results())
def test_every_run_valorch_stores_exports_and_imports_again(stored, store):
    with store() as session:
        image = ImageSpec(alias="img", reference="registry.example/img:1", backend="cpu")
        run = stored_run(session, image, stored)
        session.flush()
        doc = transfer.export_runs(session, [run])
        text = json.dumps(doc, allow_nan=False)  # valid JSON: no NaN, no infinity
        transfer.validate_export(json.loads(text))
        for r in doc["results"]:
            assert all(math.isfinite(x) for x in r["samples"])
        session.rollback()
