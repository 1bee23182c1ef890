import json

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, text

from orchestrator.errors import InfrastructureError
from orchestrator.spec import CheckResult, HostSpec, ImageSpec, SuiteRef
from orchestrator.store import queries
from orchestrator.store.coltypes import pack_samples
from orchestrator.store.db import (
    HEAD,
    MIGRATIONS,
    REVISIONS,
    current_revision,
    open_engine,
    session_factory,
    upgrade,
    url_for,
)
from orchestrator.store.models import Base
from orchestrator.store.tables import include_object_for, metadata_for


def head_revision():
    """The newest revision of the migration scripts (HEAD must name it)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(MIGRATIONS)).get_current_head()


def _drift(conn) -> list:
    """What the database lacks or has beyond the models (objects for another database left out)."""
    ctx = MigrationContext.configure(
        conn, opts={"include_object": include_object_for(conn.dialect.name)}
    )
    return compare_metadata(ctx, metadata_for(conn.dialect.name))


def test_fresh_database_is_migrated_to_head_and_matches_the_models(tmp_path):
    engine = open_engine(str(tmp_path / "v.sqlite"))
    assert current_revision(engine) == head_revision() == HEAD == "0011"
    with engine.connect() as conn:
        assert _drift(conn) == []


def test_database_made_by_create_all_is_stamped_and_keeps_its_rows(tmp_path):
    path = tmp_path / "old.sqlite"
    old = create_engine(f"sqlite:///{path}")
    Base.metadata.create_all(old)  # what open_engine did before migrations existed
    with session_factory(old)() as s:
        run = queries.start_run(
            s,
            batch="b",
            job="j",
            image=ImageSpec(alias="a", reference="a:1", backend="cpu"),
            digest=None,
            host=HostSpec(name="h"),
            executor="host",
            spec_hash="x",
            cpu_only=False,
            suites=[SuiteRef(name="smoke")],
        )
        queries.add_results(s, run.id, None, [CheckResult(check="k.one", status="pass")])
        s.commit()
        run_id = run.id
    old.dispose()

    engine = open_engine(str(path))
    assert current_revision(engine) == head_revision()
    with session_factory(engine)() as s:
        assert [(r.check.check_id, r.status) for r in queries.run_results(s, run_id)] == [
            ("k.one", "pass")
        ]
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
        conn.execute(
            text(
                "INSERT INTO image (id, alias, reference, backend, family, components) "
                "VALUES (1, 'a', 'a:1', 'cpu', 'cpu', '{}')"
            )
        )
        conn.execute(
            text("INSERT INTO host (id, name, fingerprint, spec) VALUES (1, 'h', 'f', '{}')")
        )
        conn.execute(
            text(
                "INSERT INTO run (id, batch, job, image_id, host_id, executor, valorch_version, "
                "spec_hash, cpu_only, started, state, meta) VALUES ('r1', 'b', 'j', 1, 1, 'host', "
                "'0.1', 'x', 0, '2026-01-01 00:00:00', 'done', '{}')"
            )
        )
        conn.execute(
            text(
                'INSERT INTO "check" (id, check_id, version, feature, kind, bigger_is_better) '
                "VALUES (1, 'k.t', 1, 'K', 'kernel', 0)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO result (run_id, check_pk, attempt, status, duration_s, message, log, "
                "metrics, samples) VALUES ('r1', 1, 1, 'pass', 0.1, '', '', '{}', '[0.5, 0.25, 1e-07]')"
            )
        )
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


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def empty_db(request, tmp_path):
    """A database with no tables: a new SQLite file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'v.sqlite'}"
    return request.getfixturevalue("pg_url")


def test_upgrade_from_empty_matches_the_models(empty_db):
    assert upgrade(empty_db) == (None, HEAD)
    assert upgrade(empty_db) == (HEAD, HEAD)  # again: nothing to do
    engine = open_engine(empty_db)
    with engine.connect() as conn:
        assert _drift(conn) == []
    engine.dispose()


def _rows_at(engine, revision):
    """One run with one timed result, written as the schema of `revision` stores it."""
    samples = [0.5, 0.25, 1e-07]
    blob = json.dumps(samples) if revision == "0001" else pack_samples(samples)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO image (id, alias, reference, backend, family, components) "
                "VALUES (1, 'a', 'a:1', 'cpu', 'cpu', '{}')"
            )
        )
        conn.execute(
            text("INSERT INTO host (id, name, fingerprint, spec) VALUES (1, 'h', 'f', '{}')")
        )
        conn.execute(
            text(
                "INSERT INTO run (id, batch, job, image_id, host_id, executor, valorch_version, "
                "spec_hash, cpu_only, started, state, meta) VALUES ('r1', 'b', 'nightly', 1, 1, 'host', "
                "'0.1', 'x', false, '2026-01-01 00:00:00', 'done', '{}')"
            )
        )
        conn.execute(
            text(
                'INSERT INTO "check" (id, check_id, version, feature, kind, bigger_is_better) '
                "VALUES (1, 'k.t', 1, 'K', 'kernel', false)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO result (run_id, check_pk, attempt, status, duration_s, message, log, "
                "metrics, samples) VALUES ('r1', 1, 1, 'pass', 0.1, '', '', '{}', :s)"
            ),
            {"s": blob},
        )
    return samples


@pytest.mark.parametrize("released", [r for r in REVISIONS if r != HEAD])
def test_upgrade_from_each_released_schema_keeps_the_rows(empty_db, released):
    from alembic import command

    from orchestrator.store.db import _alembic_config
    from orchestrator.store.models import Result

    old = create_engine(url_for(empty_db))
    with old.begin() as conn:
        command.upgrade(_alembic_config(conn), released)
    samples = _rows_at(old, released)
    old.dispose()
    if not empty_db.startswith("sqlite"):  # a server is never upgraded by opening it
        with pytest.raises(
            InfrastructureError, match=f"at schema {released}; this valorch needs {HEAD}"
        ) as exc:
            open_engine(empty_db)
        assert "valorch db upgrade" in exc.value.hint
        assert upgrade(empty_db) == (released, HEAD)
    engine = open_engine(empty_db)
    assert current_revision(engine) == HEAD
    with session_factory(engine)() as s:
        (row,) = s.query(Result).all()
        assert row.samples == samples and row.check.check_id == "k.t"
        assert queries.get_run(s, "r1").origin is None
    with engine.connect() as conn:
        assert _drift(conn) == []
    engine.dispose()


def test_revisions_are_alembics_history():
    from alembic.script import ScriptDirectory

    from orchestrator.store.db import MIGRATIONS

    history = [s.revision for s in ScriptDirectory(str(MIGRATIONS)).walk_revisions()]
    assert tuple(reversed(history)) == REVISIONS


def test_a_newer_schema_is_refused(empty_db):
    upgrade(empty_db)
    engine = create_engine(url_for(empty_db))
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '0999'"))
    engine.dispose()
    with pytest.raises(InfrastructureError, match="at schema 0999, newer than this valorch knows"):
        open_engine(empty_db)


def test_a_newer_schema_names_a_server_once_and_a_file_as_a_database():
    from sqlalchemy.engine import make_url

    from orchestrator.store.db import newer

    server = newer(make_url("postgresql+psycopg://ci@db.example:5433/valorch"), "0999")
    assert server.message.startswith("the results database 'valorch' on db.example:5433 is at")
    assert "database database" not in server.message
    local = newer(make_url("sqlite:////srv/valorch.sqlite"), "0999")
    assert local.message.startswith("the results database /srv/valorch.sqlite is at schema 0999")
