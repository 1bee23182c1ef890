from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, text

from orchestrator.spec import CheckResult, HostSpec, ImageSpec, SuiteRef
from orchestrator.store import queries
from orchestrator.store.db import HEAD, current_revision, head_revision, open_engine, session_factory
from orchestrator.store.models import Base


def test_fresh_database_is_migrated_to_head_and_matches_the_models(tmp_path):
    engine = open_engine(str(tmp_path / "v.sqlite"))
    assert current_revision(engine) == head_revision() == HEAD == "0003"
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
    assert current_revision(engine) == head_revision()
    with session_factory(engine)() as s:
        assert [(r.check.check_id, r.status) for r in queries.run_results(s, run_id)] == [("k.one", "pass")]
    engine.dispose()
    # opening again is a no-op: still one alembic_version row, rows intact
    engine = open_engine(str(path))
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM alembic_version")).scalar() == 1
        assert conn.execute(text("SELECT count(*) FROM result")).scalar() == 1


def test_json_samples_of_a_0001_database_become_packed_floats(tmp_path):
    from alembic import command

    from orchestrator.store.db import _alembic_config
    from orchestrator.store.models import Result

    path = tmp_path / "v1.sqlite"
    old = create_engine(f"sqlite:///{path}")
    with old.begin() as conn:
        command.upgrade(_alembic_config(conn), "0001")
    with old.begin() as conn:
        conn.execute(text("INSERT INTO image (id, alias, reference, backend, family, components) "
                          "VALUES (1, 'a', 'a:1', 'cpu', 'cpu', '{}')"))
        conn.execute(text("INSERT INTO host (id, name, fingerprint, spec) VALUES (1, 'h', 'f', '{}')"))
        conn.execute(text("INSERT INTO run (id, batch, job, image_id, host_id, executor, valorch_version, "
                          "spec_hash, cpu_only, started, state, meta) VALUES ('r1', 'b', 'j', 1, 1, 'host', "
                          "'0.1', 'x', 0, '2026-01-01 00:00:00', 'done', '{}')"))
        conn.execute(text("INSERT INTO \"check\" (id, check_id, version, feature, kind, bigger_is_better) "
                          "VALUES (1, 'k.t', 1, 'K', 'kernel', 0)"))
        conn.execute(text("INSERT INTO result (run_id, check_pk, attempt, status, duration_s, message, log, "
                          "metrics, samples) VALUES ('r1', 1, 1, 'pass', 0.1, '', '', '{}', '[0.5, 0.25, 1e-07]')"))
    old.dispose()
    engine = open_engine(str(path))
    assert current_revision(engine) == head_revision()
    with session_factory(engine)() as s:
        (row,) = s.query(Result).all()
        assert row.samples == [0.5, 0.25, 1e-07]
    with engine.connect() as conn:
        assert conn.execute(text("SELECT typeof(samples) FROM result")).scalar() == "blob"
        names = {r[1] for r in conn.execute(text("PRAGMA index_list('result')"))}
        assert "ix_result_run_id" not in names and "ix_result_status" not in names
