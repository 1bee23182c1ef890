"""The libraries' own log records, as one line each on stderr, never a traceback.

valorch configures no logging, so a record a library logs at WARNING or above went to
Python's last-resort handler, which prints the record's exception as a full traceback:
SQLAlchemy's pool logs "Exception during reset or similar" with one when a Ctrl-C lands
while a connection is being returned, and urllib3 logs its retries. The message may
quote what a server or a container said, so it is made one safe line (``encode.one_line``)
and capped. The exception itself is the caller's to handle; it still reaches valorch's
own edge, which says what to do (docs/design.md, "CLI conventions")."""

from __future__ import annotations

import logging
import sys

from . import encode, words

CAP = 300  # characters of a library's message shown


class OneLine(logging.Formatter):
    """``valorch: LOGGER: message``: no exception text, no stack, no control character."""

    def format(self, record: logging.LogRecord) -> str:
        try:
            message = record.getMessage()
        except (TypeError, ValueError, KeyError):  # a bad format string: its template
            message = str(record.msg)
        text = encode.one_line(f"{record.name}: {message}")
        return f"valorch: {words.cut(text, CAP)}"


class _Stderr(logging.StreamHandler):
    """Writes to the ``sys.stderr`` of the moment (a test or a pipe may have replaced it)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def install() -> None:
    """One handler on the root logger, once per process, at WARNING."""
    root = logging.getLogger()
    if any(isinstance(h, _Stderr) for h in root.handlers):
        return
    handler = _Stderr()
    handler.setLevel(logging.WARNING)
    handler.setFormatter(OneLine())
    root.addHandler(handler)
