from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, text

from orchestrator.spec import CheckResult, HostSpec, ImageSpec, SuiteRef
from orchestrator.store import queries
from orchestrator.store.db import current_revision, head_revision, open_engine, session_factory
from orchestrator.store.models import Base


def test_fresh_database_is_migrated_to_head_and_matches_the_models(tmp_path):
    engine = open_engine(str(tmp_path / "v.sqlite"))
    assert current_revision(engine) == head_revision() == "0001"
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []


def test_database_made_by_create_all_is_stamped_and_keeps_its_rows(tmp_path):
    path = tmp_path / "old.sqlite"
    old = create_engine(f"sqlite:///{path}")
    Base.metadata.create_all(old)  # what open_engine did before migrations existed
    with session_factory(old)() as s:
        run = queries.start_run(s, batch="b", job="j", image=ImageSpec(alias="a", reference="a:1", backend="cpu"),
                                digest=None, host=HostSpec(name="h"), executor="host", spec_hash="x",
                                cpu_only=False, suites=[SuiteRef(name="smoke")])
        queries.add_results(s, run.id, None, [CheckResult(check="k.one", status="pass")])
        s.commit()
        run_id = run.id
    old.dispose()

    engine = open_engine(str(path))
    assert current_revision(engine) == "0001"
    with session_factory(engine)() as s:
        assert [(r.check.check_id, r.status) for r in queries.run_results(s, run_id)] == [("k.one", "pass")]
    engine.dispose()
    # opening again is a no-op: still one alembic_version row, rows intact
    engine = open_engine(str(path))
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM alembic_version")).scalar() == 1
        assert conn.execute(text("SELECT count(*) FROM result")).scalar() == 1
