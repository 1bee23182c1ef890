"""Background WAL checkpoints during a bulk ingest into a SQLite file (store/checkpoint.py):
the second thread copies the log into the file while the writer goes on, and the store
is whole and consistent afterwards."""

import sqlite3
import threading
import time
import uuid
from datetime import datetime
from types import SimpleNamespace

from sqlalchemy.engine import make_url

from orchestrator.store import bulk, checkpoint, queries
from orchestrator.store.db import open_engine, session_factory
from orchestrator.store.models import Host, Image, Result, Run


def _ingest(engine, runs: int, per_run: int) -> None:
    sessions = session_factory(engine)
    with sessions() as s:
        pks = queries.check_pks(s, [(f"k.{c}", 1) for c in range(per_run)])
        bulk.insert_rows(
            s,
            Image,
            [
                {
                    "id": 1,
                    "alias": "a",
                    "reference": "a:1",
                    "digest": None,
                    "backend": "cpu",
                    "family": "f",
                    "components": {},
                }
            ],
        )
        bulk.insert_rows(s, Host, [{"id": 1, "name": "h", "fingerprint": "0" * 64, "spec": {}}])
        s.commit()
    for _ in range(runs):  # one transaction per run, as a push writes them
        rid = str(uuid.uuid4())
        with sessions() as s:
            bulk.insert_rows(
                s,
                Run,
                [
                    {
                        "id": rid,
                        "batch": "b",
                        "job": "j",
                        "image_id": 1,
                        "host_id": 1,
                        "executor": "docker",
                        "valorch_version": "t",
                        "spec_hash": "x",
                        "cpu_only": False,
                        "started": datetime(2026, 1, 1),
                        "ended": None,
                        "state": "done",
                        "meta": {},
                    }
                ],
            )
            bulk.insert_rows(
                s,
                Result,
                [
                    {
                        "run_id": rid,
                        "task_id": None,
                        "check_pk": pk,
                        "attempt": 1,
                        "status": "pass",
                        "duration_s": 0.1,
                        "message": "m" * 200,
                        "log": "",
                        "metrics": {},
                        "samples": [0.001] * 10,
                    }
                    for pk in pks.values()
                ],
            )
            s.commit()


def test_checkpoints_run_beside_the_writer_and_the_store_stays_whole(tmp_path):
    path = tmp_path / "v.sqlite"
    engine = open_engine(str(path))
    with checkpoint.background_checkpoints(engine) as worker:
        assert worker is not None and worker._thread.is_alive()
        _ingest(engine, runs=40, per_run=500)
        worker.every_s = 0.001
        time.sleep(0.3)  # a round after the last commit: everything committed is in the file
    assert not any(t.name == "valorch-checkpoint" for t in threading.enumerate())
    assert worker.error is None
    assert (
        worker.frames > 100
    )  # 20,000 results of ~300 bytes: well over 100 pages of 16 KiB went by this thread
    engine.dispose()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert conn.execute("SELECT count(*) FROM result").fetchone() == (20_000,)
        assert conn.execute("SELECT count(DISTINCT run_id) FROM result").fetchone() == (40,)


def test_nothing_for_other_stores(tmp_path):
    engine = open_engine(f"sqlite:///{tmp_path / 'v.sqlite'}")
    with checkpoint.background_checkpoints(engine) as worker:
        assert worker is not None and worker.path == str(tmp_path / "v.sqlite")

    server = SimpleNamespace(url=make_url("postgresql+psycopg://valorch@127.0.0.1/valorch"))
    with checkpoint.background_checkpoints(server) as worker:
        assert worker is None


def test_a_file_it_cannot_open_only_stops_the_helper(tmp_path):
    worker = checkpoint.Checkpointer(str(tmp_path / "missing" / "v.sqlite")).start()
    worker.stop()
    assert worker.error is not None and worker.frames == 0
