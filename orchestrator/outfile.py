"""Every file valorch writes (``--out``, ``--junit``, ``--out-dir``'s reports, a catalog it
updates) is written to a temporary file beside its target and renamed into place: a reader
sees the old file or the new one, never half of one; a full disk leaves no partial file; and
a link planted where the file goes (a symlink into someone else's file) is replaced, never
written through. The temporary file is created with ``O_EXCL`` and ``O_NOFOLLOW`` (by
``tempfile.mkstemp``), so no link can stand in for it either, and it is removed on any
failure."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from .errors import InfrastructureError, InputError, ValorchError

_UMASK: list[int] = []
_LOCK = threading.Lock()


def _umask() -> int:
    """The process's umask (read once: ``os.umask`` can only be read by setting it)."""
    with _LOCK:
        if not _UMASK:
            current = os.umask(0o022)
            os.umask(current)
            _UMASK.append(current)
        return _UMASK[0]


def error(path: Path, exc: OSError, what: str = "") -> ValorchError:
    """What a failed write of ``path`` means to a user: a full disk is the machine's (exit 3,
    naming it, nothing left half-written), anything else the path they passed (exit 2)."""
    what = what or str(path)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return InfrastructureError(
            f"{what}: the disk is full ({exc.strerror}): nothing written",
            f"free space on the file system of {path.parent} and run the command again",
        )
    if exc.errno == errno.ENXIO:  # a FIFO with no reader
        return InputError(f"{what}: a FIFO with no reader, not a file: nothing written")
    return InputError(f"{what}: cannot write it ({exc.strerror})", "check the path you passed")


def check_target(path: Path) -> None:
    """What already lives at ``path`` may be replaced by a file: absent, a regular file or a
    link (replaced itself, not followed). A directory, a FIFO, a device or a socket is exit 2
    before anything is written."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise error(path, exc) from None
    if stat.S_ISREG(mode) or stat.S_ISLNK(mode):
        return
    kind = (
        "a directory" if stat.S_ISDIR(mode) else "not a regular file (a FIFO, a device or a socket)"
    )
    raise InputError(
        f"{path}: is {kind}: nothing written",
        "name a file to write (or leave the option out for standard output)",
    )


def write(path: Path, data: bytes, validate: Callable[[Path], object] | None = None) -> None:
    """``data`` as the file ``path``: written beside it, ``validate(tmp)`` when given (a
    failure leaves the old file as it was), then renamed over it. Errors as ``error``."""
    check_target(path)
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".valorch-tmp", dir=path.parent)
    except OSError as exc:
        raise error(path, exc) from None
    tmp = Path(name)
    try:
        try:
            os.fchmod(fd, 0o666 & ~_umask())
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        if validate is not None:
            validate(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        raise error(path, exc) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
