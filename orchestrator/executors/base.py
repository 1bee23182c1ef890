"""What every executor shares: the probe's command line and its archive."""

from __future__ import annotations

import io
import json
import tarfile
from functools import lru_cache
from pathlib import Path

from ..spec import Task

PROBE_DIR = Path(__file__).resolve().parent.parent / "probe"
PROBE_PACKAGE = "valorch_probe"
IMPORT_ALLOWANCE = 300.0  # seconds for the framework import before the first check
LABEL = "org.valorch"


def expectations(task: Task) -> dict[str, str]:
    return {**task.image.components, "backend": task.image.backend}


def probe_args(task: Task) -> list[str]:
    """Arguments after ``python3 -m valorch_probe``."""
    suite = task.suite
    args = ["run", "--suite", suite.name, "--expect", json.dumps(expectations(task), sort_keys=True),
            "--deadline", f"{suite.deadline:g}", "--attempts", str(suite.attempts),
            "--import-timeout", f"{IMPORT_ALLOWANCE:g}", "--device", "cpu" if task.cpu_only else "auto"]
    for pattern in suite.checks:
        args += ["--check", pattern]
    return args


def overall_timeout(task: Task) -> float:
    """The whole run's deadline: the suite's own, or enough for every check's."""
    if task.suite.timeout:
        return task.suite.timeout
    per = task.suite.deadline * task.suite.attempts
    return min(IMPORT_ALLOWANCE + 30 + per * max(1, len(task.checks)), 4 * 3600)


@lru_cache(maxsize=1)
def probe_archive() -> bytes:
    """The probe package as a tar (``valorch/valorch_probe/...``), extracted into
    ``/opt`` with ``put_archive`` so that remote engines work as local ones do."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name in ("valorch", f"valorch/{PROBE_PACKAGE}"):
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
        for path in sorted(PROBE_DIR.rglob("*.py")):
            rel = path.relative_to(PROBE_DIR)
            info = tar.gettarinfo(str(path), arcname=f"valorch/{PROBE_PACKAGE}/{rel.as_posix()}")
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.mode = 0o644
            with path.open("rb") as fh:
                tar.addfile(info, fh)
    return buf.getvalue()
