"""PostgreSQL as the shared store, tried as a team of runners would: a real server
(tests/pgserver.py), the real console script, real processes killed mid-push."""

import json
import os
import signal
import subprocess
import time
import uuid
from datetime import datetime, timedelta

import pytest

from orchestrator.spec import HostSpec, ImageSpec, SuiteRef
from orchestrator.store import bulk, queries
from orchestrator.store.db import open_engine, session_factory
from orchestrator.store.models import Result
from tests.conftest import ROOT, VALORCH, run_cli, selftest_at_once

pytestmark = pytest.mark.postgres
SELFTEST = (
    "run",
    "--image",
    "host",
    "--suite",
    "selftest",
    "--check",
    "selftest.pass",
    "--check",
    "selftest.fail",
    "--no-gate",
    "--no-matrix",
)


def connect(url, **kwargs):
    """A psycopg connection, imported here: the module is collected where psycopg is absent
    (`make quick` installs `.[test]` only) and its tests are then deselected or skipped."""
    import psycopg

    return psycopg.connect(url, **kwargs)


def sql(url, query):
    with connect(url) as conn:
        return conn.execute(query).fetchall()


@pytest.fixture
def server_db(pg_url):
    """A fresh database on the test server with the schema made by `valorch db upgrade`."""
    r = run_cli("db", "upgrade", db=pg_url)
    assert r.returncode == 0 and "schema none → " in r.stderr, r.stderr
    return pg_url


def test_bad_urls_and_unreachable_servers_are_clean_errors(pg_server, pg_url, tmp_path):
    r = run_cli("results", "list", db="mysql://u@127.0.0.1/valorch")
    assert r.returncode == 2 and "unsupported database scheme 'mysql'" in r.stderr
    assert "valorch[postgres]" in r.stderr
    r = run_cli("results", "list", db=pg_url.replace("postgresql://", "postgresql+psycopg2://"))
    assert (
        r.returncode == 2
        and "driver is not installed" in r.stderr
        and "valorch[postgres]" in r.stderr
    )

    closed = pg_url.replace(f":{pg_server.port}/", ":1/")
    r = run_cli("results", "list", db=closed)
    name = pg_url.rsplit("/", 1)[1]
    assert (
        r.returncode == 3
        and f"database '{name}' on 127.0.0.1:1" in r.stderr
        and "refused" in r.stderr
    )
    r = run_cli("results", "list", db=pg_url.rsplit("/", 1)[0] + "/nothere")
    assert (
        r.returncode == 3
        and "database 'nothere' on 127.0.0.1" in r.stderr
        and "does not exist" in r.stderr
    )
    r = run_cli("results", "list", db=pg_url.replace("valorch@", "intruder@"))
    assert r.returncode == 3 and 'role "intruder" does not exist' in r.stderr
    # a new database has no schema: runners do not create it, `valorch db upgrade` does
    r = run_cli(*SELFTEST, db=pg_url)
    assert (
        r.returncode == 3
        and "has no valorch schema yet" in r.stderr
        and "valorch db upgrade" in r.stderr
    )
    for r in (run_cli("results", "list", db=closed), run_cli(*SELFTEST, db=pg_url)):
        assert "Traceback" not in r.stderr


def test_a_server_at_an_older_schema_is_upgraded_only_by_db_upgrade(pg_url):
    from alembic import command
    from sqlalchemy import create_engine

    from orchestrator.store.db import HEAD, _alembic_config, url_for

    engine = create_engine(url_for(pg_url))
    with engine.begin() as conn:
        command.upgrade(_alembic_config(conn), "0002")
    engine.dispose()
    for args in (("results", "list"), SELFTEST):
        r = run_cli(*args, db=pg_url)
        assert r.returncode == 3 and f"is at schema 0002; this valorch needs {HEAD}" in r.stderr, (
            r.stderr
        )
        assert "valorch db upgrade" in r.stderr and "Traceback" not in r.stderr
    assert sql(pg_url, "SELECT version_num FROM alembic_version") == [("0002",)]  # untouched
    r = run_cli("db", "status", "--json", db=pg_url)
    assert json.loads(r.stdout)["revision"] == "0002"
    r = run_cli("db", "upgrade", db=pg_url)
    assert r.returncode == 0 and f"schema 0002 → {HEAD}" in r.stderr
    assert run_cli(*SELFTEST, db=pg_url).returncode == 0


def test_eight_runs_write_to_one_server_at_once(server_db):
    selftest_at_once("host", server_db)
    runs = json.loads(run_cli("results", "list", "--json", db=server_db).stdout)
    assert len(runs) == 8 and len({r["run"] for r in runs}) == 8
    assert all(r["state"] == "done" and r["counts"] == {"pass": 1, "fail": 1} for r in runs)
    # nothing duplicated: one image row, one host row, two check rows, 16 results
    assert sql(
        server_db,
        "SELECT (SELECT count(*) FROM image), (SELECT count(*) FROM host), "
        '(SELECT count(*) FROM "check"), (SELECT count(*) FROM result), '
        "(SELECT count(DISTINCT (run_id, check_pk, attempt)) FROM result)",
    ) == [(1, 1, 2, 16, 16)]


def test_push_from_two_runners_twice_adds_everything_once(server_db, tmp_path):
    a, b = tmp_path / "runner-a.sqlite", tmp_path / "runner-b.sqlite"
    for db in (a, a, b):
        assert run_cli(*SELFTEST, db=db).returncode == 0
    with session_factory(
        open_engine(str(b))
    )() as s:  # a run still going on runner b: not pushed yet
        queries.start_run(
            s,
            batch="x",
            job="nightly",
            image=ImageSpec(alias="img", reference="img:1", backend="cpu"),
            digest=None,
            host=HostSpec(name="b"),
            executor="host",
            spec_hash="x",
            cpu_only=False,
            suites=[SuiteRef(name="smoke")],
        )
        s.commit()
    first = {
        db: json.loads(run_cli("results", "push", "--to", server_db, "--json", db=db).stdout)
        for db in (a, b)
    }
    assert (
        first[a]["pushed"],
        first[a]["results"],
        first[b]["pushed"],
        first[b]["unfinished"],
    ) == (2, 4, 1, 1)
    assert first[b]["origin"].endswith(f":{b}")
    again = run_cli("results", "push", "--to", server_db, "--origin", "runner-b", db=b)
    assert (
        again.returncode == 0
        and "pushed 0 runs" in again.stderr
        and "1 of 1 finished run was there" in again.stderr
    )
    assert (
        json.loads(run_cli("results", "push", "--to", server_db, "--json", db=a).stdout)["pushed"]
        == 0
    )

    on_server = json.loads(run_cli("results", "list", "--json", db=server_db).stdout)
    local = [
        r
        for db in (a, b)
        for r in json.loads(run_cli("results", "list", "--json", db=db).stdout)
        if r["state"] == "done"
    ]

    def key(r):
        return (r["run"], r["state"], r["counts"], r["started"])

    assert sorted(map(key, on_server)) == sorted(map(key, local))
    assert sorted(sql(server_db, "SELECT origin, count(*) FROM run GROUP BY origin")) == sorted(
        [(f"{os.uname().nodename}:{a}", 2), (f"{os.uname().nodename}:{b}", 1)]
    )
    assert sql(server_db, "SELECT count(*) FROM result") == [(6,)]
    shown = json.loads(
        run_cli("results", "show", on_server[0]["run"], "--json", db=server_db).stdout
    )
    assert shown["origin"].startswith(f"{os.uname().nodename}:{tmp_path}/runner-")
    assert (
        json.loads(
            run_cli(
                "results",
                "show",
                on_server[0]["run"],
                "--json",
                db=a if shown["origin"].endswith(str(a)) else b,
            ).stdout
        )["origin"]
        is None
    )  # the local copy was written there, not pushed


def _many_runs(db, n_runs, n_checks):
    """A runner's store with many finished runs, written in bulk."""
    with session_factory(open_engine(str(db)))() as s:
        pks = queries.check_pks(s, [(f"k.c{c:03d}", 1) for c in range(n_checks)])
        image = ImageSpec(alias="img", reference="img:1", backend="cpu")
        rows = []
        for i in range(n_runs):
            run = queries.start_run(
                s,
                batch="b",
                job="nightly",
                image=image,
                digest=None,
                host=HostSpec(name="r"),
                executor="host",
                spec_hash="x",
                cpu_only=False,
                suites=[SuiteRef(name="smoke")],
                run_id=str(uuid.UUID(int=i + 1)),
            )
            run.state, run.started = "done", datetime(2025, 1, 1) + timedelta(hours=i)
            rows += [
                {
                    "run_id": run.id,
                    "task_id": run.tasks[0].id,
                    "check_pk": pk,
                    "attempt": 1,
                    "status": "pass",
                    "duration_s": 0.1,
                    "message": "",
                    "log": "",
                    "metrics": {},
                    "samples": [0.1] * 10,
                }
                for pk in pks.values()
            ]
        bulk.insert_rows(s, Result, rows)
        s.commit()


def _whole(server_db, n_checks):
    """Runs on the server, after checking that every one of them is whole."""
    counts = sql(
        server_db,
        "SELECT r.id, count(x.id) FROM run r LEFT JOIN result x ON x.run_id = r.id GROUP BY r.id",
    )
    assert all(n == n_checks for _, n in counts), [c for c in counts if c[1] != n_checks]
    return len(counts)


#: the advisory lock a held push waits for (advisory locks are per database: each test has its own)
HOLD_KEY = 7341


def _hold_runs(server_db, after):
    """Every run the server takes once it holds ``after`` more than now waits, inside its
    transaction, for the advisory lock ``HOLD_KEY`` (a trigger): whoever holds that lock
    holds the push mid-run until it lets go, so the signal lands there on any machine."""
    with connect(server_db, autocommit=True) as conn:
        (now,) = conn.execute("SELECT count(*) FROM run").fetchone()
        conn.execute(f"""
            CREATE OR REPLACE FUNCTION valorch_test_hold() RETURNS trigger AS $$
            BEGIN
              IF (SELECT count(*) FROM run) >= {now + after} THEN
                PERFORM pg_advisory_xact_lock_shared({HOLD_KEY});
              END IF;
              RETURN NEW;
            END $$ LANGUAGE plpgsql""")
        conn.execute("DROP TRIGGER IF EXISTS valorch_test_hold ON run")
        conn.execute(
            "CREATE TRIGGER valorch_test_hold BEFORE INSERT ON run "
            "FOR EACH ROW EXECUTE FUNCTION valorch_test_hold()"
        )


def _free_runs(server_db):
    with connect(server_db, autocommit=True) as conn:
        conn.execute("DROP TRIGGER IF EXISTS valorch_test_hold ON run")


def _waiting_for_the_hold(conn) -> bool:
    """Whether a session of this database waits for ``HOLD_KEY`` (a run's insert, held)."""
    (n,) = conn.execute(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
        f"AND objid = {HOLD_KEY} AND database = (SELECT oid FROM pg_database "
        "WHERE datname = current_database())"
    ).fetchone()
    return n > 0


def _push_held_after_three(local, server_db, sig):
    """A push signalled while its fourth run waits, mid-transaction, for a lock this test
    holds (``_hold_runs``): three runs are on the server, whole, whatever the machine's
    speed. The lock goes once the pusher has ended."""
    _hold_runs(server_db, after=3)
    env = {k: v for k, v in os.environ.items() if k != "VALORCH_DB"}
    with connect(server_db, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (HOLD_KEY,))
        proc = subprocess.Popen(
            [VALORCH, "results", "push", "--to", server_db, "--db", str(local)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # Ctrl-C as in a terminal: a suite started in the background (nohup CMD &) hands
            # its children SIGINT ignored, and Python then never raises KeyboardInterrupt
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        try:
            while not _waiting_for_the_hold(holder):
                if proc.poll() is not None:
                    pytest.fail(f"the push ended before it was held: {proc.communicate()[1]}")
                time.sleep(0.02)
            proc.send_signal(sig)
            _out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    # the lock went with its session: a killed pusher's server session, let go, rolls back
    _free_runs(server_db)
    return proc.returncode, err


def test_an_interrupted_push_leaves_no_half_run_and_resumes(server_db, tmp_path):
    local, n_runs, n_checks = tmp_path / "runner.sqlite", 300, 200
    _many_runs(local, n_runs, n_checks)

    code, err = _push_held_after_three(local, server_db, signal.SIGINT)  # Ctrl-C
    assert (
        code == 130 and "interrupted" in err and "push again" in err and "Traceback" not in err
    ), err
    after_int = _whole(server_db, n_checks)
    code, err = _push_held_after_three(local, server_db, signal.SIGKILL)  # a killed runner
    assert code == -signal.SIGKILL
    after_kill = _whole(server_db, n_checks)
    assert 0 < after_int < after_kill < n_runs, (after_int, after_kill)

    r = run_cli("results", "push", "--to", server_db, "--json", db=local)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["already"] == after_kill and report["pushed"] == n_runs - after_kill
    assert _whole(server_db, n_checks) == n_runs
    assert sql(
        server_db, "SELECT count(*), count(DISTINCT (run_id, check_pk, attempt)) FROM result"
    ) == [(n_runs * n_checks, n_runs * n_checks)]


def test_a_runner_that_cannot_reach_the_server_keeps_its_runs_and_pushes_later(
    pg_server, server_db, tmp_path
):
    local = tmp_path / "runner.sqlite"
    assert run_cli(*SELFTEST, db=local).returncode == 0
    r = run_cli(
        "results", "push", "--to", server_db.replace(f":{pg_server.port}/", ":1/"), db=local
    )
    assert r.returncode == 3 and "refused" in r.stderr and "Traceback" not in r.stderr
    # nothing local may go before the server has it
    r = run_cli(
        "results", "prune", "--keep-days", "0", "--pushed-to", server_db, "--json", db=local
    )
    assert r.returncode == 0 and json.loads(r.stdout)["delete_runs"] == [], r.stderr
    assert len(json.loads(run_cli("results", "list", "--json", db=local).stdout)) == 1
    assert (
        json.loads(run_cli("results", "push", "--to", server_db, "--json", db=local).stdout)[
            "pushed"
        ]
        == 1
    )
    # two runs so that one is older than the newest of its image and host (the newest always stays)
    assert run_cli(*SELFTEST, db=local).returncode == 0
    assert run_cli("results", "push", "--to", server_db, db=local).returncode == 0
    r = run_cli("results", "prune", "--keep-days", "0", "--pushed-to", server_db, db=local)
    assert r.returncode == 0 and "deleted 1 runs whole (2 results)" in r.stdout, r.stdout
    assert len(json.loads(run_cli("results", "list", "--json", db=local).stdout)) == 1
    assert len(json.loads(run_cli("results", "list", "--json", db=server_db).stdout)) == 2


def test_prune_dry_run_on_the_server_prints_and_changes_nothing(server_db):
    for _ in range(2):
        assert run_cli(*SELFTEST, db=server_db).returncode == 0
    r = run_cli("results", "prune", "--keep-days", "0", "--dry-run", db=server_db)
    assert r.returncode == 0 and "dry run: nothing changed" in r.stdout, r.stderr
    assert "would delete 1 runs whole (2 results)" in r.stdout
    assert "kept 1 runs: the newest run of their job, image and host" in r.stdout
    assert len(json.loads(run_cli("results", "list", "--json", db=server_db).stdout)) == 2
    r = run_cli("results", "prune", "--keep-days", "0", db=server_db)
    assert r.returncode == 0 and "deleted 1 runs whole" in r.stdout
    assert len(json.loads(run_cli("results", "list", "--json", db=server_db).stdout)) == 1


def test_a_nan_a_store_holds_pushes_as_text(server_db, tmp_path):
    """A store written before NaN was encoded holds a NaN metric and timing: the push sends
    what JSON can carry (PostgreSQL's json refuses the token NaN), not a failure to retry."""
    import sqlite3

    local = tmp_path / "runner.sqlite"
    assert run_cli(*SELFTEST, db=local).returncode == 0
    con = sqlite3.connect(local)
    con.execute("""UPDATE result SET metrics = '{"x": NaN}'""")
    con.execute("""UPDATE task SET timings = '{"total_s": Infinity, "run_s": 1.5}'""")
    con.commit()
    con.close()
    r = run_cli("results", "push", "--to", server_db, db=local)
    assert r.returncode == 0, r.stderr
    assert {m["x"] for (m,) in sql(server_db, "SELECT metrics FROM result")} == {"NaN"}
    assert sql(server_db, "SELECT timings FROM task") == [({"run_s": 1.5},)]
