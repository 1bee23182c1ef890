"""What validating a directory of specs gave, kept for the next listing of the same files.

``images list`` and ``jobs list`` validate every catalog entry and job spec with pydantic
before they print a line; importing pydantic and building the models is most of their
start-up. They read the same files again and again, so what the validation produced (the
rows they print, JSON) is kept in the user's cache, under a key that changes whenever
anything the rows depend on changes:

- every file under the directory: the bytes of each ``*.yaml`` and the size and
  modification time of the rest (a job's shipped workload decides whether the job loads);
- the code that validates: the size and modification time of every module of
  ``orchestrator`` and ``valorch_probe`` (an edited checkout or an upgrade), of pydantic's,
  pydantic-core's and PyYAML's, and Python's version.

A key that is not found runs the validation as before (its errors are the user's answer,
and nothing is kept); a found one is read back without importing pydantic. The cache is an
optimisation and nothing more: a directory too large to fingerprint cheaply, a file that is
not a regular file, a cache directory that is not the user's own and private, or any
error reading or writing it, and the listing validates the files as if there were none.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import stat
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

FORMAT = "valorch-listing-1"
#: more entries than this under a directory: fingerprinting it is no longer cheap
MAX_FILES = 2000
#: a spec file larger than this is left to the validating reader (which caps and names it)
MAX_SPEC_BYTES = 4 * 1024 * 1024
#: a cached listing larger than this is not read
MAX_LISTING_BYTES = 16 * 1024 * 1024
#: listings not written for this long are removed when another is written
STALE_SECONDS = 7 * 24 * 3600

Rows = list[dict[str, Any]]
_TEXT, _ERRORS = "utf-8", "surrogateescape"
_PACKAGES = ("orchestrator", "valorch_probe")
_LIBRARIES = ("pydantic", "pydantic_core", "yaml")


class _UncacheableError(Exception):
    """The directory cannot be fingerprinted cheaply and safely: validate it instead."""


def rows(kind: str, directory: Path, build: Callable[[Path], Rows]) -> Rows:
    """``build(directory)``'s rows, from the cache when the files and the code are those it
    was written for; otherwise built (and kept, when ``build`` returns)."""
    place = _cache_dir()
    try:
        key = _key(kind, directory) if place is not None else None
    except (_UncacheableError, OSError):
        key = None
    if place is None or key is None:
        return build(directory)
    name = f"{kind}-{_digest(str(directory.resolve()))[:16]}"
    found = _read(place / f"{name}-{key[:32]}.json", key)
    if found is not None:
        return found
    made = build(directory)
    _write(place, name, key, made)
    return made


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode(_TEXT, _ERRORS)).hexdigest()


def _cache_dir() -> Path | None:
    """``$XDG_CACHE_HOME/valorch/listings`` (``~/.cache`` by default), made private; None
    where it is not a directory this user owns alone."""
    try:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        place = Path(base) / "valorch" / "listings"
        place.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(place)
    except (OSError, RuntimeError):
        return None
    private = stat.S_ISDIR(info.st_mode) and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    return place if private and info.st_uid == os.getuid() else None


def _key(kind: str, directory: Path) -> str:
    h = hashlib.sha256(f"{FORMAT}\0{kind}\0{sys.version}\0".encode())
    if not directory.is_dir():
        raise _UncacheableError(directory)
    _tree(h, directory, spec_bytes=True)
    for package in _PACKAGES:
        _tree(h, Path(__file__).resolve().parents[2] / package, spec_bytes=False)
    for library in _LIBRARIES:
        found = importlib.util.find_spec(library)
        if found is None or found.origin is None:
            raise _UncacheableError(library)
        _stat_into(h, Path(found.origin))
        _stat_into(h, Path(found.origin).parent)
    return h.hexdigest()


def _tree(h: Any, root: Path, spec_bytes: bool) -> None:
    """Every file under ``root`` into ``h``: its path, size and mtime (a link's target's),
    and with ``spec_bytes`` the bytes of each ``*.yaml``. ``__pycache__`` is left out; a
    link to a directory counts as a file (the walk never follows one, so never loops)."""
    seen = 0
    pending = [""]
    while pending:
        relative = pending.pop()
        with os.scandir(os.path.join(root, relative)) as listing:
            entries = sorted(listing, key=lambda e: e.name)
        for entry in entries:
            seen += 1
            if seen > MAX_FILES:
                raise _UncacheableError(root)
            shown = os.path.join(relative, entry.name)
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    pending.append(shown)
                continue
            if spec_bytes and entry.name.endswith(".yaml"):
                h.update(f"{shown}\0{_digest_file(Path(entry.path))}\0".encode(_TEXT, _ERRORS))
            else:
                info = entry.stat()
                h.update(f"{shown}\0{info.st_size}\0{info.st_mtime_ns}\0".encode(_TEXT, _ERRORS))


def _stat_into(h: Any, path: Path) -> None:
    info = os.stat(path)
    h.update(f"{path}\0{info.st_size}\0{info.st_mtime_ns}\0".encode(_TEXT, _ERRORS))


def _digest_file(path: Path) -> str:
    """The SHA-256 of a regular file no larger than MAX_SPEC_BYTES (opened without waiting
    on a FIFO); anything else leaves the listing to the validating reader."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SPEC_BYTES:
            raise _UncacheableError(path)
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_SPEC_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_SPEC_BYTES:
        raise _UncacheableError(path)
    return hashlib.sha256(data).hexdigest()


def _read(path: Path, key: str) -> Rows | None:
    """The rows kept under ``key``, or None: absent, not a regular file of this user's,
    too large, or not the shape this module writes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.getuid()
            or info.st_size > MAX_LISTING_BYTES
        ):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            document = json.loads(f.read(MAX_LISTING_BYTES + 1))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    if not isinstance(document, dict) or document.get("key") != key:
        return None
    found = document.get("rows")
    if not isinstance(found, list) or not all(isinstance(r, dict) for r in found):
        return None
    return found


def _write(place: Path, name: str, key: str, made: Rows) -> None:
    """Keep ``made`` (atomically: a reader sees the old file or the new one), remove this
    directory's older listings of the same kind and anyone's not written for a week.
    Nothing that goes wrong here reaches the user: the listing is already made."""
    try:
        text = json.dumps({"format": FORMAT, "key": key, "rows": made}, sort_keys=True)
        fd, scratch = tempfile.mkstemp(prefix=".listing-", dir=place)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(scratch, place / f"{name}-{key[:32]}.json")
        except BaseException:
            Path(scratch).unlink(missing_ok=True)
            raise
        now = time.time()
        for other in place.iterdir():
            mine = other.name.startswith(f"{name}-") and other.name != f"{name}-{key[:32]}.json"
            if mine or now - other.lstat().st_mtime > STALE_SECONDS:
                other.unlink(missing_ok=True)
    except (OSError, TypeError, ValueError):
        return
