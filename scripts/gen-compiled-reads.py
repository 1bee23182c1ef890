#!/usr/bin/env python3
"""Write orchestrator/store/compiled_reads.json: the statements of
orchestrator/store/read_statements.py compiled for SQLite (named parameters), with the
conversion each bound parameter and each result column needs, and the schema revision
they were compiled at. orchestrator/store/sqlite_reads.py runs them on the standard
library's sqlite3, so that a read-only command starts without importing SQLAlchemy; the
SQL itself is written once, in read_statements.py.

    python3 scripts/gen-compiled-reads.py [--out PATH] [--check]

--check exits 1 when the file on disk differs from what would be written.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generated_file import write_or_check
from sqlalchemy import JSON, Boolean, DateTime
from sqlalchemy.dialects import sqlite

from orchestrator.store.coltypes import Checked
from orchestrator.store.read_statements import STATEMENTS
from orchestrator.store.revision import HEAD

GENERATED = "by scripts/gen-compiled-reads.py from orchestrator/store/read_statements.py; do not edit by hand"
OUT = ROOT / "orchestrator" / "store" / "compiled_reads.json"


def _kind(type_: Any) -> str | None:
    """How sqlite_reads.py converts a value of this column type (as SQLAlchemy's SQLite
    dialect does): a date/time as ISO text, JSON as text, a boolean as 0/1; None: as is."""
    inner = type_.inner if isinstance(type_, Checked) else type_
    for cls, kind in ((DateTime, "datetime"), (JSON, "json"), (Boolean, "bool")):
        if isinstance(inner, cls):
            return kind
    return None


def render() -> str:
    dialect = sqlite.dialect(paramstyle="named")
    statements = {}
    for name, stmt in STATEMENTS.items():
        compiled = stmt.compile(dialect=dialect)
        named = {rendered: bind for bind, rendered in compiled.bind_names.items()}
        statements[name] = {
            "sql": compiled.string,
            # what the caller binds (reads.py), and how each value is converted
            "params": {k: _kind(b.type) for k, b in sorted(named.items()) if b.required},
            # what the statement itself fixed (a literal it compares with, OFFSET 0)
            "fixed": {k: b.value for k, b in sorted(named.items()) if not b.required},
            "columns": [_kind(col.type) for col in stmt.selected_columns],
        }
    doc = {"generated": GENERATED, "schema": HEAD, "statements": statements}
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    return write_or_check(argv, __doc__ or "", OUT, render)


if __name__ == "__main__":
    sys.exit(main())
