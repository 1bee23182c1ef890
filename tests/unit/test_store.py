from sqlalchemy import text

from orchestrator.spec import CheckResult, HostSpec, ImageSpec, SuiteRef
from orchestrator.store import queries
from orchestrator.store.db import open_engine, session_factory


def test_sqlite_is_wal(tmp_path):
    engine = open_engine(str(tmp_path / "v.sqlite"))
    with engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"


def test_results_are_idempotent(store_db):
    sessions = session_factory(open_engine(store_db))
    image = ImageSpec(alias="a", reference="a:1", backend="cpu")
    with sessions() as s:
        run = queries.start_run(
            s,
            batch="b",
            job="j",
            image=image,
            digest=None,
            host=HostSpec(name="h"),
            executor="host",
            spec_hash="x",
            cpu_only=False,
            suites=[SuiteRef(name="smoke")],
        )
        results = [
            CheckResult(check="k.one", status="fail"),
            CheckResult(check="k.one", status="pass", attempt=2),
        ]
        assert queries.add_results(s, run.id, None, results) == 2
        assert queries.add_results(s, run.id, None, results) == 0
        s.commit()
        stored = queries.run_results(s, run.id)
        assert [(r.check.check_id, r.attempt, r.status) for r in stored] == [
            ("k.one", 1, "fail"),
            ("k.one", 2, "pass"),
        ]
        assert queries.get_run(s, run.id[:8]).id == run.id
