"""Results that could not be stored (the database's disk was full) wait in a spill
file until ``valorch run --resume BATCH`` imports them: nothing measured is lost, and
nothing is stored twice (a task's results and its ``done`` state go in together, and a
spill file is deleted only once they are committed).

Where: beside a SQLite file (``<db>.spill/``) when that can be written, else
``$VALORCH_SPILL_DIR``, else ``$XDG_STATE_HOME/valorch/spill`` (default
``~/.local/state/valorch/spill``), else the temporary directory. One JSON file per
task, named after its batch and task id, holding the database it belongs to.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy.engine import URL
from sqlalchemy.orm import Session

from ..spec import Execution, Task
from .location import sqlite_file
from .models import TaskRow


def _db_key(url: URL) -> str:
    if url.get_backend_name() == "sqlite" and url.database:
        return "sqlite:" + str(Path(url.database).resolve())
    return url.render_as_string(hide_password=True)


def directories(url: URL) -> list[Path]:
    """Where spill files go, first choice first."""
    dirs = []
    path = sqlite_file(url)
    if path is not None:
        db = Path(path).resolve()
        dirs.append(db.with_name(db.name + ".spill"))
    if os.environ.get("VALORCH_SPILL_DIR"):
        dirs.append(Path(os.environ["VALORCH_SPILL_DIR"]))
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    dirs.append(state / "valorch" / "spill")
    dirs.append(Path(tempfile.gettempdir()) / f"valorch-spill-{os.getuid()}")
    return dirs


def write(
    url: URL, batch: str, run_id: str, task_id: int, task: Task, execution: Execution
) -> Path:
    """Spill one task's results; the path written. OSError when no directory takes it."""
    record = {
        "db": _db_key(url),
        "batch": batch,
        "run_id": run_id,
        "task_id": task_id,
        "task": task.model_dump(mode="json"),
        "execution": execution.model_dump(mode="json"),
    }
    blob = json.dumps(record)
    last: OSError | None = None
    for d in directories(url):
        path = d / f"{batch}-{task_id}.json"
        tmp = d / f".{batch}-{task_id}.json.tmp"
        try:
            d.mkdir(parents=True, exist_ok=True)
            tmp.write_text(blob, encoding="utf-8")
            os.replace(tmp, path)
            return path
        except OSError as exc:
            last = exc
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass
    raise last or OSError("no spill directory")


def pending(url: URL, batch: str) -> list[tuple[Path, dict[str, Any]]]:
    """The spill files of this database's ``batch``, in every directory."""
    key, found = _db_key(url), []
    for d in directories(url):
        for path in sorted(d.glob(f"{batch}-*.json")) if d.is_dir() else ():
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if record.get("db") == key and record.get("batch") == batch:
                found.append((path, record))
    return found


def recover(session: Session, url: URL, batch: str, complete: Callable[..., Any]) -> list[Path]:
    """Store the spilled results of ``batch`` whose task is not done yet (``complete`` is
    ``store.queue.complete``); the caller commits, then deletes the returned files."""
    files = []
    for path, record in pending(url, batch):
        row = session.get(TaskRow, record["task_id"])
        if row is not None and row.state != "done":
            complete(
                session,
                record["run_id"],
                record["task_id"],
                Task.model_validate(record["task"]),
                Execution.model_validate(record["execution"]),
            )
        files.append(path)
    return files
