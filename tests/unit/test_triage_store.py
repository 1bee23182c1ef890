"""The triage kept with the results (table triage, migration 0007): decided when a run ends,
read back as stored, a quarantine recorded on another batch's run as host-fault evidence,
a suite that never reported as infrastructure, and runs arriving by import triaged there."""

from datetime import timedelta

import pytest
from sqlalchemy import func, select

from orchestrator.services import results as results_service
from orchestrator.services import triage
from orchestrator.spec import CheckResult, HostSpec, ImageSpec, SuiteRef
from orchestrator.store import queries
from orchestrator.store.db import open_engine, session_factory, upgrade

IMAGE = ImageSpec(alias="img", reference="img:nightly", backend="cpu")
DIGEST = "sha256:" + "c" * 64


def triage_run(factory, run_id, catalog=None):
    """check id -> Triage for each check of the run that did not pass, decided now from what
    the store holds (what stored_or_now falls back to)."""
    with factory() as session:
        run = queries.get_run(session, run_id)
        return triage._decide(session, run, triage._pinned(catalog, run.image.alias))


def store(tmp_path, name="v.sqlite"):
    return session_factory(open_engine(str(tmp_path / name)))


@pytest.mark.postgres
def test_quarantine_evidence_on_postgresql(pg_url):
    """The meta filter of host_events (JSON cast to text) on PostgreSQL as on SQLite."""
    upgrade(pg_url)  # a server is upgraded by valorch db upgrade, never on open
    f = session_factory(open_engine(pg_url))
    bad = finished_run(f, "h1", {"k.bad": ["fail"]})
    later = finished_run(
        f,
        "h2",
        {"k.ok": ["pass"]},
        batch="b2",
        minutes=30,
        meta={"quarantined": [{"host": "h1", "reason": "device_nodes: missing /dev/kfd"}]},
    )
    t = triage.record(f, [bad])[bad]["k.bad"]
    assert t.cls == "host fault" and t.runs == (bad, later)
    assert triage.stored_or_now(f, bad)["k.bad"].cls == "host fault"


def finished_run(factory, host, statuses, batch="b1", meta=None, task_error=None, minutes=0):
    with factory() as s:
        run = queries.start_run(
            s,
            batch=batch,
            job="j",
            image=IMAGE,
            digest=DIGEST,
            host=HostSpec(name=host),
            executor="docker",
            spec_hash="x",
            cpu_only=False,
            suites=[SuiteRef(name="smoke")],
        )
        run.started = run.started + timedelta(minutes=minutes)
        queries.add_results(
            s,
            run.id,
            None,
            [
                CheckResult(check=c, status=st, attempt=a)
                for c, sts in statuses.items()
                for a, st in enumerate(sts, 1)
            ],
        )
        if task_error:
            run.tasks[0].state, run.tasks[0].error = "error", task_error
        run.state, run.ended, run.meta = "done", run.started, meta or {}
        s.commit()
        return run.id


def test_stored_when_recorded_and_read_back(tmp_path):
    f = store(tmp_path)
    rid = finished_run(f, "h1", {"k.ok": ["pass"], "k.bad": ["fail"], "k.flip": ["fail", "pass"]})
    assert triage.stored_or_now(f, rid) == triage_run(f, rid)  # nothing stored yet: decided now
    triage.record(f, [rid])
    got = triage.stored_or_now(f, rid)
    assert {c: t.cls for c, t in got.items()} == {"k.bad": "new check", "k.flip": "flaky"}
    assert got["k.bad"].runs == (rid,) and got["k.bad"].digests == (DIGEST,)
    clean = finished_run(f, "h1", {"k.ok": ["pass"]}, batch="b2")
    triage.record(f, [clean])
    assert triage.stored_or_now(f, clean) == {}  # triaged, nothing red


def test_quarantine_recorded_on_another_batch_is_host_fault_evidence(tmp_path):
    f = store(tmp_path)
    bad = finished_run(f, "h1", {"k.bad": ["fail"]})
    later = finished_run(
        f,
        "h2",
        {"k.ok": ["pass"]},
        batch="b2",
        minutes=30,
        meta={
            "quarantined": [
                {
                    "host": "h1",
                    "reason": "device_nodes: missing /dev/kfd",
                    "at": "2026-01-01T00:30:00",
                }
            ]
        },
    )
    far = finished_run(
        f,
        "h2",
        {"k.ok": ["pass"]},
        batch="b3",
        minutes=60 * 30,
        meta={"quarantined": [{"host": "h1", "reason": "much later", "at": "2026-01-02T06:00:00"}]},
    )
    t = triage.record(f, [bad])[bad]["k.bad"]
    assert t.cls == "host fault" and t.runs == (bad, later) and far not in t.runs
    assert (
        "quarantined by the L0 preflight of batch b2" in t.reason and "missing /dev/kfd" in t.reason
    )
    assert "much later" not in t.reason  # outside the window around the run


def test_suite_that_never_reported_is_infrastructure(tmp_path):
    f = store(tmp_path)
    rid = finished_run(f, "h1", {}, task_error="engine unreachable: connection refused")
    t = triage.record(f, [rid])[rid]["suite smoke"]
    assert t.cls == "infrastructure" and "engine unreachable" in t.reason
    assert triage.stored_or_now(f, rid)["suite smoke"].cls == "infrastructure"


def test_imported_runs_are_triaged_against_the_receiving_store(tmp_path):
    src = store(tmp_path, "src.sqlite")
    first = finished_run(src, "h1", {"k.bad": ["fail"]})
    second = finished_run(src, "h1", {"k.bad": ["fail"]}, batch="b2", minutes=5)
    doc = results_service.export(src, [first, second])
    dst = store(tmp_path, "dst.sqlite")
    results_service.import_(dst, doc, "export.json")
    assert triage.stored_or_now(dst, first)["k.bad"].cls == "new check"
    assert triage.stored_or_now(dst, second)["k.bad"].cls == "never passed"


def test_prune_deletes_a_triaged_run_with_its_triage(tmp_path):
    from orchestrator.store import retention
    from orchestrator.store.tables import triage as triage_table

    f = store(tmp_path)
    old = finished_run(f, "h1", {"k.bad": ["fail"]})
    finished_run(f, "h1", {"k.bad": ["pass"]}, batch="b2", minutes=5)  # the newest of its job: kept
    triage.record(f, [old])
    with f() as s:
        p = retention.plan(
            s, queries.now() + timedelta(days=1), keep_published=True, delete_all=True
        )
        assert [r.id for r in p.delete] == [old]
        retention.apply(s, p, queries.now())
        s.commit()
        assert (
            s.execute(select(func.count()).select_from(triage_table)).scalar() == 0
            and queries.get_run(s, old) is None
        )
