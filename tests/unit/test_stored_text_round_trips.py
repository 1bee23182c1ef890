"""Text a job spec gives valorch to store, valorch's own import reads back.

A job's name and labels are stored with each of its runs and travel in the run's export.
The spec holds them to the rule the import holds names to (``plaintext.problem``, 1 to 200
characters): the property checks, over any text (controls, bidirectional overrides, line
separators, lone surrogates, long and empty strings), that a name is accepted by a job spec
exactly when the real export of a stored run carrying it is accepted by the import; and the
run a spec-accepted name and labels make round-trips through export and import into a
second store.
"""

from __future__ import annotations

import copy
import uuid

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from orchestrator.spec import BatchInfo, HostSpec, ImageSpec, JobSpec, SuiteRef
from orchestrator.store import export_schema, queue, transfer
from orchestrator.store.db import open_engine, session_factory
from orchestrator.store.models import Run

IMAGE = ImageSpec(alias="img_a", reference="acme/img:1", backend="cpu")
HOST = HostSpec(name="h1")
#: what a hostile or careless spec holds: controls, bidi marks and overrides, separators
ODD = "\x00\x1b\x07\n\t\x7f\x85\x9b\u200e\u200f\u202a\u202e\u2066\u2069\u2028\u2029\ufeff\ud800"
TEXT = st.text(
    alphabet=st.one_of(st.characters(exclude_categories=()), st.sampled_from(ODD)), max_size=260
)


def _spec(name: str, labels: tuple[str, ...] = ()) -> JobSpec | None:
    try:
        return JobSpec.model_validate(
            {"name": name, "labels": list(labels), "images": ["host"], "suites": ["smoke"]}
        )
    except ValidationError:
        return None


def _store_run(db, spec: JobSpec) -> None:
    factory = session_factory(open_engine(str(db)))
    ctx = BatchInfo(str(uuid.uuid4()), spec.name, spec.spec_hash, spec.labels)
    with factory() as s:
        run_id, _ = queue.enqueue(s, ctx, IMAGE, HOST, "docker", False, [SuiteRef(name="smoke")])
        run = s.get(Run, run_id)
        run.state, run.ended = "done", run.started
        s.commit()


def _export(db) -> dict:
    factory = session_factory(open_engine(str(db)))
    with factory() as s:
        return transfer.export_runs(s, list(s.query(Run).all()))


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict:
    """The real export of one stored run of a job spec (name and labels replaced per case)."""
    db = tmp_path_factory.mktemp("text") / "s.sqlite"
    smoke = (SuiteRef(name="smoke"),)
    _store_run(db, JobSpec(name="nightly", labels=("gfx942",), images=("host",), suites=smoke))
    return _export(db)


@settings(max_examples=400, deadline=None)
@given(text=TEXT)
@example(text="")
@example(text="x" * 200)
@example(text="x" * 201)
@example(text="a\u2028b")
@example(text="nightly\x1b[2J")
@example(text="rtl\u202eevil")
@example(text="\U0001f600" * 200)
def test_a_name_is_accepted_by_a_spec_exactly_when_the_import_accepts_it(exported, text):
    doc = copy.deepcopy(exported)
    doc["runs"][0]["job"] = text
    assert (_spec(text) is not None) == (export_schema.problems(doc) == [])
    # a label is held to the same rule as a name
    assert (_spec("j", (text,)) is not None) == (_spec(text) is not None)


@pytest.mark.parametrize(
    "name,labels",
    [
        ("\U0001f600" * 200, ("\u05e2\u05d1\u05e8\u05d9\u05ea",) * 16),  # astral, RTL script
        ("e\u0301" * 100, ("x" * 200,)),  # combining marks, the longest label
    ],
)
def test_a_run_a_spec_accepts_round_trips_through_export_and_import(tmp_path, name, labels):
    spec = JobSpec(name=name, labels=labels, images=("host",), suites=(SuiteRef(name="smoke"),))
    _store_run(tmp_path / "a.sqlite", spec)
    doc = _export(tmp_path / "a.sqlite")
    factory = session_factory(open_engine(str(tmp_path / "b.sqlite")))
    with factory() as s:
        assert transfer.import_runs(s, doc, "test:a.sqlite")["runs"] == 1
        s.commit()
    back = _export(tmp_path / "b.sqlite")["runs"][0]
    assert back["job"] == name and back["meta"]["_job"]["labels"] == list(labels)
