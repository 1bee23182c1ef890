"""Flags declared and checked where they are parsed.

``option`` is ``typer.Option`` with where the option acts (applies.py): the refusal where it
has no effect and its help's note are read from that declaration (commands/inert.py).
The callbacks give a clean exit 2 naming the flag and the allowed range, never a pydantic
traceback or a value (nan, inf, 1e300) that breaks a timer far from the command line. Use
as ``typer.Option(..., callback=seconds("--deadline"))``."""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import typer

from .. import satellites
from ..applies import JSON, RESUME, Applies
from ..bounds import EXTENDED_RESOURCE, MAX_SECONDS, VERSION_PATTERN

#: what a resumed run keeps from its stored batch
RESUMED = Applies(not_with=(RESUME,))
#: --format beside --json (``--format json`` agrees with it)
FORMAT = Applies(not_with=(JSON,), agrees="json")
#: the placement options of run, qualify and bisect: each executor's own, and those a cluster
#: does itself
SLURM = Applies(("slurm",), not_with=(RESUME,))
KUBERNETES = Applies(("kubernetes",), not_with=(RESUME,))
PULLS = Applies(("docker",), not_with=(RESUME,), why="only docker pulls images from here")
HOSTS = Applies(("host", "docker"), why="the cluster places every job itself")
RETRIES = Applies(("host", "docker"), why="the cluster keeps its own retries")


def option(default: Any, *decls: str, applies: Applies | None, **kw: Any) -> Any:
    """``typer.Option(default, *decls, **kw)`` that declares where the option acts."""
    info = typer.Option(default, *decls, **kw)
    info.applies = applies  # read back by commands/inert.py
    return info


def _bad(flag: str, value: object, allowed: str) -> typer.BadParameter:
    return typer.BadParameter(
        f"{value} is not allowed: {flag} takes {allowed}", param_hint=f"'{flag}'"
    )


def number(flag: str, lo: float, hi: float, *, lo_open: bool = False, unit: str = "") -> Callable:
    """A finite float in [lo, hi] (or (lo, hi] with ``lo_open``); None passes (an unset option)."""
    allowed = f"a number{unit} in {'(' if lo_open else '['}{lo:g}, {hi:g}]"

    def check(value: float | None) -> float | None:
        if value is None:
            return None
        if not math.isfinite(value) or value > hi or value < lo or (lo_open and value == lo):
            raise _bad(flag, value, allowed)
        return value

    return check


def date(flag: str) -> Callable:
    """An ISO date or date and time (YYYY-MM-DD, YYYY-MM-DDTHH:MM) as a datetime; None passes."""

    def check(value: str | None) -> datetime | None:
        if not value:
            return None
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            raise _bad(flag, repr(value), "a date, YYYY-MM-DD or YYYY-MM-DDTHH:MM") from None

    return check


def seconds(flag: str, hi: float = MAX_SECONDS) -> Callable:
    """Seconds > 0 and at most ``hi`` (a week by default)."""
    return number(flag, 0.0, hi, lo_open=True, unit=" of seconds")


def integer(flag: str, lo: int, hi: int) -> Callable:
    """An int in [lo, hi]; None passes."""

    def check(value: int | None) -> int | None:
        if value is not None and not lo <= value <= hi:
            raise _bad(flag, value, f"a whole number in [{lo}, {hi}]")
        return value

    return check


def version_name(flag: str) -> Callable:
    """A matrix version or baseline name: 1 to 64 of ``A-Z a-z 0-9 . _ -`` (bounds.VERSION_PATTERN);
    it appears in file names, URLs and report headers."""

    def check(value: str | None) -> str | None:
        if value is not None and not re.fullmatch(VERSION_PATTERN, value):
            allowed = "1 to 64 characters from A-Z a-z 0-9 . _ - (e.g. v0.3, 2026.01-rc1)"
            raise _bad(flag, repr(value), allowed)
        return value

    return check


def extended_resource(flag: str) -> Callable:
    """A Kubernetes extended resource name (``rdma/hca``: bounds.EXTENDED_RESOURCE), not one of
    the ``kubernetes.io`` domain; None passes."""

    def check(value: str | None) -> str | None:
        if value is None:
            return None
        domain = value.partition("/")[0]
        if not re.fullmatch(EXTENDED_RESOURCE, value) or domain.endswith("kubernetes.io"):
            allowed = "the extended resource a device plugin advertises, DOMAIN/NAME"
            raise _bad(
                flag, repr(value[:120]), allowed + " (e.g. rdma/hca), not a kubernetes.io one"
            )
        return value

    return check


def statuses(flag: str) -> Callable:
    """A comma-separated list of result statuses (``fail,crash``), each one of the status
    vocabulary (statuses.STATUSES), as a tuple; None or empty passes as ()."""

    def check(value: str | None) -> tuple[str, ...]:
        from ..statuses import STATUSES  # not spec: the vocabulary without pydantic

        chosen = tuple(dict.fromkeys(s.strip() for s in (value or "").split(",") if s.strip()))
        unknown = [s for s in chosen if s not in STATUSES]
        if unknown:
            raise _bad(
                flag,
                repr(",".join(unknown)),
                f"statuses from {', '.join(STATUSES)}, comma-separated",
            )
        return chosen

    return check


def _writable_dir(path: Path) -> str | None:
    """Why files cannot be created in ``path`` or the directories it would be made under
    (None when they can): the nearest existing ancestor must be a writable directory."""
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            return f"{path} has no existing parent"
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is not a directory"
    if probe != path:
        return None if os.access(probe, os.W_OK | os.X_OK) else f"{probe} is not writable"
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=probe):
            return None
    except OSError as exc:
        return f"cannot create a file in {probe}: {exc.strerror or exc}"


def _writable_file(path: Path) -> str | None:
    """Why ``path`` cannot be written as a file (None when it can). What a write would change
    is checked where it lives (through a symbolic link, at its target): an existing file is
    opened for appending without being changed, and must be a regular file; a new one is
    created and removed again. Nothing is left behind, and nothing blocks (a FIFO)."""
    if path.is_dir():
        return f"{path} is a directory"
    target = Path(os.path.realpath(path))
    if not target.parent.exists():
        return _writable_dir(target.parent)
    existed = target.exists()
    how = os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC
    how |= os.O_APPEND if existed else os.O_CREAT | os.O_EXCL
    try:
        fd = os.open(target, how, 0o666)
    except OSError as exc:
        return f"cannot write {path}: {exc.strerror or exc}"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return f"{path} is not a regular file (a FIFO, a device or a socket)"
    finally:
        os.close(fd)
        if not existed:
            target.unlink(missing_ok=True)
    return None


def output(flag: str, what: str, problem: Callable[[Path], str | None]) -> Callable:
    """A file or directory an option writes (--junit, --out, --out-dir): checked when parsed,
    so a path that cannot be written is exit 2 before any work starts; None passes."""

    def check(value: Path | None) -> Path | None:
        why = None if value is None else problem(value)
        if why:
            raise typer.BadParameter(
                f"{why}: {flag} names a {what} this command writes", param_hint=f"'{flag}'"
            )
        return value

    return check


def releases_file(value: Path | None) -> Path | None:
    """--releases, given explicitly: a file that is not there is exit 2 when parsed, never the
    same as no file (None passes: the command's default)."""
    if value is not None and not value.exists():
        hint = "valorch images import-releases FILE writes one"
        raise typer.BadParameter(f"{value}: no such file; {hint}", param_hint="'--releases'")
    return value


def _not_a_file(path: Path) -> str | None:
    return f"{path} is a file" if path.is_file() else _writable_dir(path)


# the callbacks, made once (an option's default may not call a function)
OUT_FILE = output("--out", "file", _writable_file)
JUNIT_FILE = output("--junit", "file", _writable_file)
OUT_DIR = output("--out-dir", "directory", _not_a_file)
OUT_SITE_DIR = output("--out", "directory", _not_a_file)


def satellite_choice(flag: str, choice: str, satellite: str) -> Callable:
    """A choice a satellite brings (--executor kubernetes, --format cyclonedx) whose extra is
    not installed is exit 2 when parsed, with the install command, before any work starts.
    Returns the choice's text: typer converts what a callback returns to the enum once
    more, and finds no member named ``str(ExecutorChoice.docker)``."""

    def check(value: object) -> object:
        chosen = getattr(value, "value", value)
        if chosen == choice:
            satellites.require(satellite, f"{flag} {choice}")
        return chosen

    return check
