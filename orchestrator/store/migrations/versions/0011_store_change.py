"""The store's change log: every insert, update and delete (and on PostgreSQL, TRUNCATE), by
whatever wrote it (valorch, a push, an import, or SQL by hand), is noted by a trigger in
``store_change``: one row per run whose row or results, tasks, triage or inventory changed
(an update notes the run a row was of and the one it is of), and one row ("") for a change
to anything else (images, hosts, checks, published versions, baselines, acceptances,
attestations), each with the sequence number of its newest change. A reader that noted the
newest number can later ask which runs changed since (store/changes.py) without reading
them: the static site built in place keeps what an unchanged run made (docs/site.md).

SQLite has one writer at a time, so numbers are given in commit order (the newest plus one).
PostgreSQL takes them from a sequence, in no such order, so each row also notes its
transaction: a change a reader could not yet see has a transaction at or above the oldest
one running when it read (store/changes.py).

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

# table → the column naming its run; every other table of this schema is noted as ""
OF_A_RUN = {
    "run": "id",
    "result": "run_id",
    "task": "run_id",
    "triage": "run_id",
    "inventory": "run_id",
}
OTHER = (
    "image",
    "host",
    "check",
    "matrix_version",
    "matrix_cell",
    "baseline",
    "attestation",
    "acceptance",
)
OPS = ("insert", "update", "delete")
# the rows a trigger of each reads: an update notes the run a row was of and the run it is of
ROWS = {"insert": ("NEW",), "update": ("OLD", "NEW"), "delete": ("OLD",)}


def upgrade() -> None:
    bind = op.get_bind()
    if "store_change" not in sa.inspect(bind).get_table_names():  # else made by create_all
        op.create_table(
            "store_change",
            sa.Column("run_id", sa.String(36), primary_key=True),
            sa.Column("seq", sa.BigInteger(), nullable=False),
            sa.Column("xid", sa.BigInteger(), nullable=True),
        )
        op.create_index("ix_store_change_seq", "store_change", ["seq"])
    if bind.dialect.name == "postgresql":
        _postgresql()
    else:
        _sqlite()


def _sqlite_note(run: str) -> str:
    return (
        f"INSERT INTO store_change (run_id, seq) VALUES ({run}, "
        "(SELECT coalesce(max(seq), 0) + 1 FROM store_change)) "
        "ON CONFLICT (run_id) DO UPDATE SET seq = excluded.seq"
    )


def _sqlite() -> None:
    """Row triggers (SQLite has no other); an upsert, which an outer OR IGNORE or OR
    REPLACE does not turn into something else."""
    for table, column in (*OF_A_RUN.items(), *((t, "") for t in OTHER)):
        for o in OPS:
            runs = [f"coalesce({r}.{column}, '')" for r in ROWS[o]] if column else ["''"]
            notes = " ".join(f"{_sqlite_note(run)};" for run in runs)
            op.execute(
                f"CREATE TRIGGER IF NOT EXISTS store_change_{table}_{o} "
                f'AFTER {o.upper()} ON "{table}" FOR EACH ROW BEGIN {notes} END'
            )


def _pg_note(run: str, source: str = "") -> str:
    return (
        f"INSERT INTO store_change (run_id, seq, xid) SELECT {run}, nextval('store_change_seq'), "
        f"txid_current() {source} "
        "ON CONFLICT (run_id) DO UPDATE SET seq = EXCLUDED.seq, xid = EXCLUDED.xid"
    )


def _pg_trigger(
    name: str, table: str, when: str, body: str, refs: str = "", each: str = "STATEMENT"
) -> None:
    op.execute(
        f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql "
        f"AS $$ BEGIN {body}; RETURN NULL; END $$"
    )
    op.execute(f'DROP TRIGGER IF EXISTS {name} ON "{table}"')
    op.execute(
        f'CREATE TRIGGER {name} AFTER {when} ON "{table}" {refs} '
        f"FOR EACH {each} EXECUTE FUNCTION {name}()"
    )


def _postgresql() -> None:
    """Statement triggers on the tables of a run: the runs a statement touched, once each,
    from its transition table (a bulk insert of 300 results notes its run once, not 300
    times); a row trigger on the others."""
    op.execute("CREATE SEQUENCE IF NOT EXISTS store_change_seq")
    for table, column in OF_A_RUN.items():
        for o in OPS:
            kinds = ROWS[o]
            runs = " UNION ".join(f"SELECT {column} AS id FROM {k.lower()}_rows" for k in kinds)
            _pg_trigger(
                f"store_change_{table}_{o}",
                table,
                o.upper(),
                _pg_note("r.id", f"FROM (SELECT DISTINCT id FROM ({runs}) u) r"),
                "REFERENCING " + " ".join(f"{k} TABLE AS {k.lower()}_rows" for k in kinds),
            )
    for table in (*OF_A_RUN, *OTHER):  # TRUNCATE (SQLite has none): no row to name
        _pg_trigger(f"store_change_{table}_truncate", table, "TRUNCATE", _pg_note("''"))
    for table in OTHER:  # row triggers: a statement that changes no row notes nothing
        _pg_trigger(
            f"store_change_{table}", table, "INSERT OR UPDATE OR DELETE", _pg_note("''"), each="ROW"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in OF_A_RUN:
            for o in OPS:
                op.execute(f'DROP TRIGGER IF EXISTS store_change_{table}_{o} ON "{table}"')
                op.execute(f"DROP FUNCTION IF EXISTS store_change_{table}_{o}()")
        for table in OTHER:
            op.execute(f'DROP TRIGGER IF EXISTS store_change_{table} ON "{table}"')
            op.execute(f"DROP FUNCTION IF EXISTS store_change_{table}()")
        for table in (*OF_A_RUN, *OTHER):
            op.execute(f'DROP TRIGGER IF EXISTS store_change_{table}_truncate ON "{table}"')
            op.execute(f"DROP FUNCTION IF EXISTS store_change_{table}_truncate()")
        op.execute("DROP SEQUENCE IF EXISTS store_change_seq")
    else:
        for table in (*OF_A_RUN, *OTHER):
            for o in OPS:
                op.execute(f"DROP TRIGGER IF EXISTS store_change_{table}_{o}")
    op.drop_index("ix_store_change_seq", table_name="store_change")
    op.drop_table("store_change")
