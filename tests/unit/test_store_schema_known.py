"""The structural check of an opened store (store/damaged.py) covers every table of the
models' schema, table for table and column for column."""

from orchestrator.store import damaged
from orchestrator.store.models import Base

SCHEMA = {t.name: tuple(c.name for c in t.columns) for t in Base.metadata.sorted_tables}


def test_every_table_is_checked():
    assert sorted(damaged.CHECKED) == sorted(SCHEMA)
    assert (
        damaged.schema_problems({t: set(cols) for t, cols in SCHEMA.items()}, Base.metadata) == []
    )


def test_schema_problems_names_each_missing_table_and_column():
    found = {t: set(cols) for t, cols in SCHEMA.items() if t != "result"}
    found["run"].discard("meta")
    assert damaged.schema_problems(found, Base.metadata) == [
        "column 'run.meta' is missing",
        "table 'result' is missing",
    ]


def test_a_statement_meeting_a_dropped_table_or_column_is_named():
    assert (
        "table 'result' is missing"
        in damaged.structural("(sqlite3.OperationalError) no such table: result").message
    )
    assert "column 'run.meta' is missing" in damaged.structural("no such column: run.meta").message
    assert "table 'run' is missing" in damaged.structural('relation "run" does not exist').message
    assert damaged.structural("database is locked") is None
