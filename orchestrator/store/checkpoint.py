"""Write-ahead-log checkpoints off the writer's thread, for bulk ingests into a SQLite file.

In WAL mode every page a transaction writes goes to the log first, and a checkpoint
copies it into the database file later. SQLite runs that copy inside the commit that
crosses ``wal_autocheckpoint``, on the writing thread: during a bulk ingest every second
200,000-result transaction paid for it and ran at 165,000 results/s instead of 215,000
(bench/bench_scale_fleet.py). Here a second connection, on its own thread, runs PASSIVE
checkpoints while the writer goes on encoding and inserting the next rows; the sqlite3
module releases the GIL inside SQLite, so on a machine with two cores the copy runs beside
the ingest. PASSIVE never blocks the writer and never waits for readers: what it cannot
copy yet it leaves for the next round, and the writer's own auto-checkpoint stays on as
the backstop. Nothing changes for durability: the same frames reach the same file.

Only for SQLite files; for anything else ``background_checkpoints`` does nothing.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .location import sqlite_file

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

EVERY_S = 0.05  # a PASSIVE checkpoint with nothing to copy costs microseconds


class Checkpointer:
    """A thread that checkpoints the WAL of the SQLite file at ``path`` while it runs."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.stopping = threading.Event()
        self.frames = 0  # WAL frames (pages) this thread copied into the file
        self.error: str | None = None
        self._thread = threading.Thread(target=self._loop, name="valorch-checkpoint", daemon=True)

    def start(self) -> Checkpointer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._thread.join()

    def _loop(self) -> None:
        try:
            conn = sqlite3.connect(self.path, timeout=0, check_same_thread=False)
        except sqlite3.Error as exc:
            self.error = str(exc)
            return
        try:
            copied = 0  # of the log as it is now; a log that starts over starts from 0
            while not self.stopping.wait(EVERY_S):
                try:
                    _busy, _log, done = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                except sqlite3.OperationalError:
                    continue  # busy: another checkpoint runs; try again next round
                self.frames += done - copied if done >= copied else done
                copied = done
        except sqlite3.Error as exc:  # the writer sees its own errors; this one only stops helping
            self.error = str(exc)
        finally:
            conn.close()


@contextlib.contextmanager
def background_checkpoints(engine: Engine) -> Iterator[Checkpointer | None]:
    """Checkpoint the WAL on a second thread while the block bulk-inserts (SQLite files)."""
    path = sqlite_file(engine.url)
    if path is None:
        yield None
        return
    worker = Checkpointer(path).start()
    try:
        yield worker
    finally:
        worker.stop()
