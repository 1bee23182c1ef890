"""The files a pytest workload ships, contained in its directory.

A workload (a test file or directory on this machine) is packed into the container, to
any engine, remote ones included: nothing outside it may go along. A symlink to a file
inside the workload is resolved (its content is shipped under the link's name); a
symlink that points outside, a dangling one, a symlink to a directory and anything that
is not a regular file (a FIFO, a device) are refused. ``__pycache__`` and ``*.pyc`` stay
home.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class WorkloadError(ValueError):
    """A workload that would ship something from outside itself (or something not a file)."""


def inside(path: Path, root: Path) -> bool:
    """Whether the resolved ``path`` is ``root`` or below it (both resolved)."""
    return path == root or root in path.parents


def _skipped(name: str) -> bool:
    return name == "__pycache__" or name.endswith(".pyc")


def contained_files(src: Path) -> list[tuple[Path, str]]:
    """(file to read, path relative to the workload, "" for a single-file workload) for every
    regular file of ``src``, links resolved and checked, sorted. Raises WorkloadError."""
    root = Path(src).resolve()
    if not root.exists():
        raise WorkloadError(f"{src} does not exist")
    if root.is_file():
        return [(root, "")]
    out: list[tuple[Path, str]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        for name in sorted(dirnames):
            path = here / name
            if _skipped(name):
                dirnames.remove(name)
            elif path.is_symlink():
                raise WorkloadError(
                    f"{path} is a symlink to a directory ({os.readlink(path)}); workloads ship "
                    "files only: replace the link by the directory, or drop it"
                )
        dirnames.sort()
        for name in sorted(filenames):
            if _skipped(name):
                continue
            path = here / name
            real = path.resolve()
            if path.is_symlink():
                if not real.exists():
                    raise WorkloadError(f"{path} is a dangling symlink (to {os.readlink(path)})")
                if not inside(real, root):
                    raise WorkloadError(
                        f"{path} is a symlink to {real}, outside the workload {root}: it is "
                        "never shipped; copy the file into the workload if the tests need it"
                    )
            mode = real.stat().st_mode
            if not stat.S_ISREG(mode):
                raise WorkloadError(
                    f"{path} is not a regular file (a FIFO, socket or device); remove it"
                )
            out.append((real, (here / name).relative_to(root).as_posix()))
    return out


def contained(src: Path, roots: list[Path]) -> Path | None:
    """The first of ``roots`` (resolved) that holds the resolved ``src``, else None."""
    real = Path(src).resolve()
    for root in roots:
        if inside(real, Path(root).resolve()):
            return Path(root).resolve()
    return None
