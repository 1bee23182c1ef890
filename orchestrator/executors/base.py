"""What every executor shares: the probe's command line and its archive."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from ..spec import CheckResult, Execution, Task
from .workload_files import contained_files

PROBE_DIR = Path(__file__).resolve().parent.parent.parent / "valorch_probe"
PROBE_PACKAGE = "valorch_probe"
IMPORT_ALLOWANCE = 300.0  # seconds for the framework import before the first check
LABEL = "org.valorch"


def expectations(task: Task) -> dict[str, str]:
    """What the catalog declares of the image. The local interpreter (``--image host``) is
    catalogued as cpu by default, not by anyone's declaration: ``host`` says so, and the probe
    then describes whatever torch build it finds instead of holding it to "cpu"."""
    declared = {**task.image.components, "backend": task.image.backend}
    return {**declared, "host": "1"} if task.image.executor == "host" else declared


def check_deadline(task: Task) -> float:
    """Seconds per check: the suite's deadline, raised to cover a declared command's
    or pytest workload's own timeout (which then reports ``timeout`` itself)."""
    declared = task.suite.declared_timeout()
    return max(task.suite.deadline, declared + 30) if declared else task.suite.deadline


def probe_args(task: Task) -> list[str]:
    """Arguments after ``python3 -m valorch_probe``."""
    suite = task.suite
    args = [
        "run",
        "--suite",
        suite.name,
        "--expect",
        json.dumps(expectations(task), sort_keys=True),
        "--deadline",
        f"{check_deadline(task):g}",
        "--attempts",
        str(suite.attempts),
        "--import-timeout",
        f"{IMPORT_ALLOWANCE:g}",
        "--device",
        "cpu" if task.cpu_only else "auto",
    ]
    for pattern in suite.checks:
        args += ["--check", pattern]
    declaration = suite.declaration()
    if declaration is not None:
        args += ["--declare", json.dumps(declaration, sort_keys=True)]
    return args


def overall_timeout(task: Task) -> float:
    """The whole run's deadline: the suite's own, or enough for every check's."""
    if task.suite.timeout:
        return task.suite.timeout
    per = check_deadline(task) * task.suite.attempts
    return min(IMPORT_ALLOWANCE + 30 + per * max(1, len(task.checks)), 4 * 3600)


@lru_cache(maxsize=1)
def probe_archive() -> bytes:
    """The probe package as a tar (``valorch/valorch_probe/...``), for the Slurm step's
    ``docker cp`` into ``/opt``."""
    return _probe_tar(["valorch"], f"valorch/{PROBE_PACKAGE}/")


@lru_cache(maxsize=1)
def probe_package() -> tuple[bytes, str]:
    """The probe package's files at the archive's root (``__init__.py``, ``checks/...``), for
    a volume that is mounted as the package itself, and the digest of its content: of each
    file's path and bytes, so that the same probe has the same digest whatever the files'
    times (executors/probe_volume.py)."""
    digest = hashlib.sha256()
    for path in sorted(PROBE_DIR.rglob("*.py")):
        rel = path.relative_to(PROBE_DIR).as_posix().encode()
        data = path.read_bytes()
        digest.update(b"%d:%s%d:" % (len(rel), rel, len(data)) + data)
    return _probe_tar([], ""), digest.hexdigest()


@contextmanager
def probe_copy() -> Iterator[str]:
    """A temporary directory holding a private copy of the probe package, for the local
    interpreter (the host executor, an inventory of ``--image host``)."""
    with tempfile.TemporaryDirectory(prefix="valorch-probe-") as tmp:
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(PROBE_DIR, Path(tmp) / PROBE_PACKAGE, ignore=ignore)
        yield tmp


def _probe_tar(dirs: list[str], prefix: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        _add_dirs(tar, *dirs, *([prefix.rstrip("/")] if prefix else []))
        for path in sorted(PROBE_DIR.rglob("*.py")):
            _add_file(tar, path, f"{prefix}{path.relative_to(PROBE_DIR).as_posix()}")
    return buf.getvalue()


#: under the probe's working directory: /opt/valorch/workloads in a container
WORKLOADS = "workloads"
MAX_WORKLOAD = 64 << 20  # bytes shipped with one task


def workload_source(task: Task) -> Path | None:
    """The file or directory on this machine that a pytest workload ships (or None)."""
    p = task.suite.pytest
    if p is None or p.in_image or not p.source:
        return None
    return Path(p.source)


def workload_archives(task: Task) -> list[bytes]:
    """What a docker task copies into its container before the start: the workload it ships,
    if any, as a tar for ``put_archive`` into the probe's root (``workloads/<name>``; the probe
    is mounted from its volume: executors/probe_volume.py). Only regular files inside the
    workload go (symlinks resolved and contained: workload_files)."""
    src, shipped = workload_source(task), task.suite.pytest
    if src is None or shipped is None:
        return []
    files = contained_files(src)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        _add_dirs(tar, WORKLOADS)
        made: set[str] = set()
        for real, rel in files:
            arcname = f"{WORKLOADS}/{shipped.shipped_name}" + (f"/{rel}" if rel else "")
            parents = [p for p in Path(arcname).parents if str(p).count("/") >= 1][::-1]
            for parent in parents:  # directory entries, each once, before their files
                if str(parent) not in made:
                    made.add(str(parent))
                    _add_dirs(tar, str(parent))
            _add_file(tar, real, arcname)
            if buf.tell() > MAX_WORKLOAD:
                raise ValueError(f"workload {src} is larger than {MAX_WORKLOAD >> 20} MiB")
    return [buf.getvalue()]


def ship_workload(task: Task, root: Path) -> None:
    """Copy the shipped workload under ``root/workloads`` (the host executor's copy): the
    same contained files as the archive, never a link's target outside the workload."""
    src, shipped = workload_source(task), task.suite.pytest
    if src is None or shipped is None:
        return
    dest = root / WORKLOADS / shipped.shipped_name
    for real, rel in contained_files(src):
        target = dest / rel if rel else dest
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(real, target)


def _add_file(tar: tarfile.TarFile, path: Path, arcname: str) -> None:
    """A regular file, owned by root and world-readable whoever packs it."""
    info = tar.gettarinfo(str(path), arcname=arcname)
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    info.mode = 0o644
    with path.open("rb") as fh:
        tar.addfile(info, fh)


def _add_dirs(tar: tarfile.TarFile, *names: str) -> None:
    """Directory entries first, so the archive extracts into a bare /opt."""
    for name in names:
        info = tarfile.TarInfo(name)
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(info)


class Executor(Protocol):
    """What every executor does: run one task's probe and bring back its Execution.
    ``on_result`` sees each result as it arrives (the live view); ``on_started`` is
    called once the task has started (its container runs, its job is submitted)."""

    name: str

    def execute(
        self,
        task: Task,
        run_id: str,
        on_result: Callable[[CheckResult], None] | None = None,
        on_started: Callable[[], None] | None = None,
    ) -> Execution: ...
