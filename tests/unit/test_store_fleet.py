"""The store's fleet-scale reads (latest matrix of a job, last runs of an image) and
retention, on SQLite and on a real PostgreSQL server."""

from datetime import datetime, timedelta

import pytest

from orchestrator.services import evidence
from orchestrator.spec import CheckResult, HostSpec, ImageSpec, SuiteRef
from orchestrator.store import bulk, matrix_store, queries, retention, tables
from orchestrator.store.db import open_engine, session_factory
from orchestrator.store.models import Result, Run

T0 = datetime(2025, 1, 1, 2, 0)
TIMES = [1.0, 1.1, 0.9, 1.05, 0.95]


def add(s, job, alias, host, day, statuses, state="done"):
    run = queries.start_run(
        s,
        batch=f"b{day}",
        job=job,
        image=ImageSpec(alias=alias, reference=f"r/{alias}:1", backend="cpu"),
        digest=None,
        host=HostSpec(name=host),
        executor="docker",
        spec_hash="x",
        cpu_only=False,
        suites=[SuiteRef(name="smoke")],
    )
    queries.add_results(
        s,
        run.id,
        run.tasks[0].id,
        [
            CheckResult(check=c, status=st, samples=[t * (1 + day / 100) for t in TIMES])
            for c, st in statuses.items()
        ],
    )
    run.state, run.started, run.ended = (
        state,
        T0 + timedelta(days=day),
        T0 + timedelta(days=day, minutes=5),
    )
    s.flush()
    return run.id


@pytest.fixture
def factory(store_db):
    return session_factory(open_engine(store_db))


def test_newest_runs_of_a_job_and_the_last_runs_of_an_image(factory):
    with factory() as s:
        n = {d: add(s, "nightly", "img", "h1", d, {"k.a": "pass", "k.b": "fail"}) for d in range(3)}
        other = add(s, "nightly", "img", "h2", 1.5, {"k.a": "pass"})
        release = add(s, "release", "img", "h1", 5, {"k.a": "fail"})
        add(s, "nightly", "img", "h1", 9, {"k.a": "pass"}, state="running")
        elsewhere = add(s, "nightly", "other", "h1", 2.5, {"k.a": "pass"})
        s.commit()

        groups = matrix_store.run_groups(
            s, job="nightly"
        )  # finished runs by image, host, --cpu-only, job
        assert sorted((g.host_id, g.job, g.runs, g.suites) for g in groups) == [
            (1, "nightly", 1, frozenset({"smoke"})),
            (1, "nightly", 3, frozenset({"smoke"})),
            (2, "nightly", 1, frozenset({"smoke"})),
        ]
        assert sum(g.runs for g in matrix_store.run_groups(s, ["im*"])) == 5
        assert matrix_store.run_groups(s, ["nope*"]) == []
        img = [g for g in groups if g.runs == 3 or g.host_id == 2]
        runs, rows = matrix_store.runs_of(s, img, None, 0, 2)
        assert [r.id for r in runs] == [n[2], other] and rows == 2
        assert [r.id for r in matrix_store.runs_of(s, img, None, 2, 9)[0]] == [n[1], n[0]]
        # the matrix's evidence: each check's newest final verdict per image and host class
        ev = evidence.gather(s, job="nightly")
        cells = {(o.column, o.check): (o.run_id, o.status) for o in ev.observations}
        assert cells == {
            ("img", "k.a"): (n[2], "pass"),
            ("img", "k.b"): (n[2], "fail"),
            ("other", "k.a"): (elsewhere, "pass"),
        }
        assert [r.id for r in queries.latest_runs(s, ["img"])] == [release]
        assert [r.id for r in queries.latest_runs(s, ["img"], skip_jobs=["release"])] == [n[2]]
        assert [r.id for r in queries.last_runs_of_image(s, "img")] == [n[2], release]
        assert [r.id for r in queries.last_runs_of_image(s, "img", skip_jobs=["release"])] == [
            other,
            n[2],
        ]
        assert queries.last_runs_of_image(s, "nope") == []


def test_prune_keeps_what_is_referred_to_and_drops_the_rest(factory):
    with factory() as s:
        old_adhoc = add(s, "adhoc", "img", "h1", 0, {"k.a": "pass"})
        old_nightly = add(s, "nightly", "img", "h1", 1, {"k.a": "pass", "k.b": "fail"})
        old_base = add(s, "nightly", "img", "h1", 2, {"k.a": "pass"})
        old_pub = add(s, "nightly", "img", "h1", 3, {"k.a": "pass"})
        old_pub_adhoc = add(s, "adhoc", "img", "h1", 4, {"k.a": "pass"})
        newest_adhoc = add(
            s, "adhoc", "img", "h1", 5, {"k.a": "pass"}
        )  # the newest ad-hoc run: live matrix
        running = add(s, "nightly", "img", "h1", 6, {"k.a": "pass"}, state="running")
        recent = add(s, "nightly", "img", "h1", 400, {"k.a": "pass"})
        bulk.set_baseline(s, "v0.1", run_id=old_base)
        mv = s.execute(
            tables.matrix_version.insert()
            .values(version="v0.2", published=T0, last_verified=T0)
            .returning(tables.matrix_version.c.id)
        ).scalar_one()
        s.execute(
            tables.matrix_cell.insert().values(
                matrix_id=mv,
                row="k.a",
                column="img",
                verdict="pass",
                statuses=["pass"],
                runs=[old_pub, old_pub_adhoc],
            )
        )
        s.commit()

        cutoff = T0 + timedelta(days=100)
        p = retention.plan(s, cutoff, keep_published=True)
        assert [r.id for r in p.delete] == [old_adhoc] and p.delete[0].results == 1
        assert (
            p.strip == (old_nightly,)
            and p.strip_results == 2
            and p.strip_bytes == 2 * 8 * len(TIMES)
        )
        assert p.kept == {"baseline": 1, "published": 2, "newest": 1}
        assert retention.apply(s, p, T0 + timedelta(days=500)) == {
            "runs_deleted": 1,
            "results_deleted": 1,
            "samples_stripped": 2,
        }
        s.commit()
        assert s.get(Run, old_adhoc) is None
        for kept in (old_base, old_pub, old_pub_adhoc, newest_adhoc, running, recent):
            assert s.get(Run, kept) is not None
            assert all(r.samples for r in queries.run_results(s, kept))
        stripped = queries.run_results(s, old_nightly)
        assert [r.samples for r in stripped] == [[], []]
        summary = stripped[0].metrics[retention.SUMMARY]
        assert summary["n"] == len(TIMES) and summary["median"] == pytest.approx(1.01)

        again = retention.plan(s, cutoff, keep_published=True)
        assert again.delete == () and again.strip == ()  # done once: nothing left to do
        loose = retention.plan(s, cutoff, keep_published=False)
        assert loose.delete == () and set(loose.strip) == {old_pub, old_pub_adhoc}
        retention.apply(s, loose, T0 + timedelta(days=501))
        s.commit()
        assert (
            s.get(Run, old_pub_adhoc) is not None
            and queries.run_results(s, old_pub)[0].samples == []
        )
        assert s.query(Result).filter(Result.run_id == old_pub).count() == 1
