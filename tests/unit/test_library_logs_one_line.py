"""A library's own log record is one line on stderr, never a traceback
(orchestrator/library_logs.py): SQLAlchemy's pool, when a Ctrl-C lands while a connection
is being reset, logged "Exception during reset or similar" with a full traceback."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from orchestrator import library_logs

ROOT = Path(__file__).resolve().parents[2]

# The real library, the real console entry: the console script's main() runs a command,
# then a connection's reset is interrupted the way a Ctrl-C interrupts it (the DB-API
# connection's rollback raises KeyboardInterrupt) and SQLAlchemy's pool logs it.
INTERRUPTED_RESET = textwrap.dedent(
    """
    import sys
    from orchestrator import cli
    from sqlalchemy import create_engine
    sys.argv = ["valorch", "version"]
    try:
        cli.main()
    except SystemExit:
        pass
    engine = create_engine("sqlite://")
    conn = engine.connect()
    raw = conn.connection.dbapi_connection

    class Interrupted:
        def __getattr__(self, name):
            return getattr(raw, name)

        def rollback(self):
            raise KeyboardInterrupt

    conn.connection._connection_record.dbapi_connection = Interrupted()
    conn.connection.dbapi_connection = Interrupted()
    try:
        conn.close()
    except KeyboardInterrupt:
        print("interrupt reached the caller")
    """
)


def test_an_interrupted_connection_reset_is_one_line_not_a_traceback():
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_RESET],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "interrupt reached the caller" in done.stdout  # the exception is still the caller's
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == [
        "valorch: sqlalchemy.pool.impl.SingletonThreadPool: Exception during reset or similar"
    ]


def _record(name: str, message: str) -> logging.LogRecord:
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        return logging.LogRecord(name, logging.ERROR, __file__, 1, message, None, sys.exc_info())


@given(st.text(max_size=60), st.text(max_size=2000))
def test_any_record_is_one_safe_capped_line(name, message):
    line = library_logs.OneLine().format(_record(name, message))
    assert line.startswith("valorch: ")
    assert "\n" not in line and "\r" not in line and "Traceback" not in line
    assert not any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in line)
    assert len(line) <= len("valorch: ") + library_logs.CAP


def test_a_bad_format_string_shows_its_template():
    record = logging.LogRecord("lib", logging.WARNING, __file__, 1, "%d items", ("x",), None)
    assert library_logs.OneLine().format(record) == "valorch: lib: %d items"


def test_installed_once_per_process():
    root = logging.getLogger()
    before = list(root.handlers)
    try:
        library_logs.install()
        library_logs.install()
        added = [h for h in root.handlers if h not in before]
        assert len(added) <= 1
    finally:
        for h in [h for h in root.handlers if h not in before]:
            root.removeHandler(h)
