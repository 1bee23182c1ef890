"""Diff sides resolved from a real store (SQLite and PostgreSQL): runs, prefixes, batches, baselines, matrix versions."""

from datetime import datetime

import pytest

from orchestrator.errors import InputError
from orchestrator.regression import rule as diff
from orchestrator.services.diff import report_for, resolve
from orchestrator.spec import CheckResult, HostSpec, ImageSpec, SuiteRef
from orchestrator.store import bulk, queries, tables
from orchestrator.store.db import open_engine, session_factory
from orchestrator.store.models import Result

TIGHT = [1.0, 1.01, 0.99, 1.002, 0.998, 1.005, 0.995, 1.003, 0.997, 1.001]


def store_run(s, batch, alias, results):
    run = queries.start_run(
        s,
        batch=batch,
        job="j",
        image=ImageSpec(alias=alias, reference=alias + ":1", backend="cpu"),
        digest="sha256:" + alias,
        host=HostSpec(name="h"),
        executor="docker",
        spec_hash="x",
        cpu_only=False,
        suites=[SuiteRef(name="smoke")],
    )
    queries.add_results(s, run.id, None, results)
    run.state = "done"
    s.flush()
    return run.id


@pytest.fixture
def factory(store_db):
    return session_factory(open_engine(store_db))


def test_sides_from_the_store(factory):
    with factory() as s:
        a = store_run(
            s,
            "batch-aaaa",
            "img",
            [
                CheckResult(check="k.ok", status="pass"),
                CheckResult(check="k.t", status="pass", samples=TIGHT),
                CheckResult(check="k.v", status="pass", version=1),
            ],
        )
        b = store_run(
            s,
            "batch-bbbb",
            "img",
            [
                CheckResult(check="k.ok", status="crash", message="SIGSEGV"),
                CheckResult(check="k.t", status="pass", samples=[x * 1.3 for x in TIGHT]),
                CheckResult(check="k.v", status="fail", version=2),
            ],
        )
        s.commit()
        report = report_for(s, a[:6], b, 0.05, None)
        kinds = {c.check: c.kind for c in report.changes}
        assert kinds == {"k.ok": diff.REGRESSED, "k.t": diff.SLOWER, "k.v": diff.NOT_COMPARABLE}
        assert report.base.digests == (("img", "sha256:img"),) and report.head.hosts == ("h",)
        assert resolve(s, "batch-bb").runs == (b,)
        assert resolve(s, "latest").runs == (b,)
        assert resolve(s, "latest:img").kind == "latest"
        bulk.set_baseline(s, "v0.1", run_id=a)
        assert resolve(s, "v0.1").runs == (a,) and resolve(s, "v0.1").kind == "baseline"
        with pytest.raises(InputError, match="'nope' is not a run"):
            resolve(s, "nope")
        with pytest.raises(InputError, match="no finished runs of other"):
            resolve(s, "latest:other")


def test_pooled_side_is_the_newest_digest_on_one_host(factory):
    """latest:ALIAS:N pools the N newest runs of the image's newest digest on its host, never
    an older digest or another host's runs (they would widen the noise it divides by √N)."""

    def run(digest, host, started):
        r = queries.start_run(
            s,
            batch=f"b-{started}",
            job="j",
            image=ImageSpec(alias="img", reference="img:1", backend="cpu"),
            digest=digest,
            host=HostSpec(name=host),
            executor="docker",
            spec_hash="x",
            cpu_only=False,
            suites=[SuiteRef(name="smoke")],
        )
        queries.add_results(s, r.id, None, [CheckResult(check="k.t", status="pass", samples=TIGHT)])
        r.state, r.started = "done", datetime(2026, 1, 1, 0, started)
        s.flush()
        return r.id

    with factory() as s:
        old = [run("sha256:old", "h", m) for m in (0, 1, 2)]
        other_host = run("sha256:new", "h2", 3)
        new = [run("sha256:new", "h", m) for m in (4, 5)]
        s.commit()
        assert old and other_host
        side = resolve(s, "latest:img:2")
        assert (
            side.runs == tuple(new)
            and side.digests == (("img", "sha256:new"),)
            and side.hosts == ("h",)
        )
        with pytest.raises(
            InputError, match="has 2 finished runs of its newest digest on h, not 3"
        ) as exc:
            resolve(s, "latest:img:3")
        assert "--repeat 1" in exc.value.hint


def test_matrix_version_side_is_status_only(factory):
    with factory() as s:
        t0 = datetime(2025, 1, 1)
        mv = s.execute(
            tables.matrix_version.insert()
            .values(version="v0.2", published=t0, last_verified=t0)
            .returning(tables.matrix_version.c.id)
        ).scalar_one()
        s.execute(
            tables.matrix_cell.insert(),
            [
                {
                    "matrix_id": mv,
                    "row": "k.ok",
                    "column": "img",
                    "verdict": "pass",
                    "statuses": ["pass"],
                },
                {
                    "matrix_id": mv,
                    "row": "k.flaky",
                    "column": "img",
                    "verdict": "flaky",
                    "statuses": ["fail", "pass"],
                },
            ],
        )
        b = store_run(
            s,
            "batch-cccc",
            "img",
            [
                CheckResult(check="k.ok", status="fail", version=3),
                CheckResult(check="k.flaky", status="pass"),
            ],
        )
        s.commit()
        side = resolve(s, "v0.2")
        assert side.kind == "matrix" and {o.version for o in side.observations} == {None}
        report = report_for(s, "v0.2", b, 0.05, None)
        assert {c.check: c.kind for c in report.changes} == {
            "k.ok": diff.REGRESSED,
            "k.flaky": diff.FIXED,
        }


def test_bulk_insert_rows_round_trips_json(factory):
    with factory() as s:
        run = store_run(s, "batch-dddd", "img", [])
        pks = queries.check_pks(s, [("k.a", 1)], {("k.a", 1): {"kind": "kernel"}})
        bulk.insert_rows(
            s,
            Result,
            [
                {
                    "run_id": run,
                    "task_id": None,
                    "check_pk": pks[("k.a", 1)],
                    "attempt": 1,
                    "status": "pass",
                    "duration_s": 0.1,
                    "message": "",
                    "log": "",
                    "metrics": {"x": 1},
                    "samples": [0.25, 0.5],
                }
            ],
        )
        s.commit()
        (row,) = queries.run_results(s, run)
        assert row.samples == [0.25, 0.5] and row.metrics == {"x": 1} and row.check.kind == "kernel"
