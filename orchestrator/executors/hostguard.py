"""What keeps valorch's secrets from a workload on ``--image host`` (the local interpreter,
no container), and who that workload runs as.

A host workload runs on the user's own machine. The environment it gets is an allow-list
(``hostenv.allowed``), but a process can read more than its environment: every process's
``/proc/PID/cmdline`` is world-readable, and a process of the same uid reads
``/proc/PID/environ`` (and opens ``/proc/PID/fd/*``) of every dumpable process of that uid;
root reads them all. So, before a host run:

- valorch makes itself non-dumpable (``harden``): its environment, descriptors and memory
  are closed to processes without CAP_SYS_PTRACE, same uid included (the probe already is);
- the secrets valorch holds (the values of its secret-looking variables and the passwords
  of URLs in its environment or its command line, ``hostenv.secret_values``) are looked for
  where the workload could read them (``in_reach``): valorch's own command line, and the
  command lines and environments of its ancestors (a shell or CI runner that exported
  them), as far as the workload's user can read them; a root workload reads everything;
- one in reach stops the run before anything runs (exit 2), naming the secret by its name
  (never its value), where it is readable, and the ways out: run host workloads as another
  user (``VALORCH_WORKLOAD_USER``, when valorch is root), remove the secret from reach, or
  ``--host-secrets-visible`` to accept it knowingly.

A job that passes a variable on purpose (``pass_env``) has made it visible: it is not
looked for. Whatever a workload prints is still scrubbed of every secret in any common
rendering (``hostenv.scrub``).
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import InputError
from . import hostenv

ENV_USER = "VALORCH_WORKLOAD_USER"
PR_SET_DUMPABLE = 4
MAX_PROC_READ = 1 << 20  # bytes read of one /proc file


@dataclass(frozen=True)
class Reach:
    """A secret valorch holds (``name``: where valorch has it) readable at ``where``."""

    name: str
    where: str


def harden() -> bool:
    """Make this process non-dumpable (once is enough: the flag stays until an execve)."""
    try:
        import ctypes

        return bool(ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)
    except (OSError, AttributeError, ImportError):  # not Linux: nothing to harden with
        return False


def workload_user() -> tuple[int, int] | None:
    """The uid and gid ``VALORCH_WORKLOAD_USER`` names (a user name, ``UID`` or ``UID:GID``),
    or None when it is unset. Only root can run workloads as another user."""
    text = os.environ.get(ENV_USER, "").strip()
    if not text:
        return None
    uid_text, _, gid_text = text.partition(":")
    try:
        entry = pwd.getpwuid(int(uid_text)) if uid_text.isdigit() else pwd.getpwnam(uid_text)
        uid, gid = entry.pw_uid, entry.pw_gid
    except (KeyError, ValueError):
        if not uid_text.isdigit():
            raise InputError(
                f"{ENV_USER}={text!r}: no such user on this machine",
                "name an existing user, or give UID:GID (e.g. 65534:65534)",
            ) from None
        uid, gid = int(uid_text), int(uid_text)
    if gid_text:
        if not gid_text.isdigit():
            raise InputError(f"{ENV_USER}={text!r}: the group must be a number", "e.g. 65534:65534")
        gid = int(gid_text)
    if uid == 0:
        raise InputError(
            f"{ENV_USER}={text!r} is root", "name an unprivileged user for host workloads"
        )
    if os.geteuid() != 0:
        raise InputError(
            f"{ENV_USER}={text!r}: only root can run host workloads as another user",
            f"run valorch as root, or unset {ENV_USER}",
        )
    return uid, gid


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(MAX_PROC_READ)
    except OSError:
        return None


def _ancestors(pid: int) -> list[int]:
    found: list[int] = []
    while pid > 1 and len(found) < 64:
        stat = _read(f"/proc/{pid}/stat")
        if stat is None:
            break
        fields = stat[stat.rfind(b")") + 2 :].split()
        pid = int(fields[1]) if len(fields) > 1 else 0
        if pid > 1:
            found.append(pid)
    return found


def _uid_of(pid: int) -> int | None:
    status = _read(f"/proc/{pid}/status") or b""
    for line in status.splitlines():
        if line.startswith(b"Uid:"):
            parts = line.split()
            return int(parts[2]) if len(parts) > 2 else None  # the effective uid
    return None


def held(
    environ: Mapping[str, str], argv: Sequence[str], passed: Iterable[str] = ()
) -> dict[str, str]:
    """The secrets valorch holds, value → where it holds it (a variable's name, or its
    command line), less those of the variables a job passes on purpose."""
    visible = [environ[name] for name in passed if name in environ]
    found: dict[str, str] = {}
    for name, value in environ.items():
        for secret in hostenv.secret_values({name: value}):
            found.setdefault(secret, f"${name}")
    for secret in hostenv.secret_values({"argv": " ".join(argv)}):
        found.setdefault(secret, "a URL's password")
    return {v: where for v, where in found.items() if not any(v in text for text in visible)}


def in_reach(secrets: Mapping[str, str], workload_uid: int) -> list[Reach]:
    """Where a workload running as ``workload_uid`` could read one of ``secrets``: this
    process's command line (world-readable; its environment is closed by ``harden``),
    and its ancestors' command lines and (same uid, or a root workload) environments."""
    if not secrets:
        return []
    me = os.getpid()
    places: list[tuple[str, str]] = [
        (f"/proc/{me}/cmdline", "valorch's command line (readable by every user)")
    ]
    if workload_uid == 0:
        places.append((f"/proc/{me}/environ", "valorch's environment (a root workload reads it)"))
    for pid in _ancestors(me):
        comm = (_read(f"/proc/{pid}/comm") or b"?").decode("utf-8", "replace").strip()
        places.append((f"/proc/{pid}/cmdline", f"the command line of process {pid} ({comm})"))
        if workload_uid in (0, _uid_of(pid)):
            places.append((f"/proc/{pid}/environ", f"the environment of process {pid} ({comm})"))
    found: list[Reach] = []
    for path, where in places:
        text = (_read(path) or b"").decode("utf-8", "replace")
        found += [Reach(name, where) for value, name in secrets.items() if value in text]
    return found


def check(passed: Iterable[str], visible: bool) -> tuple[int, int] | None:
    """Before a host run: harden this process, find who the workloads run as (None: as
    valorch's own user), and stop (InputError, exit 2) when a secret valorch holds is in
    their reach, unless ``visible`` (``--host-secrets-visible``) accepts it."""
    user = workload_user()
    harden()
    if visible:
        return user
    raw = _read(f"/proc/{os.getpid()}/cmdline") or b""
    argv = [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]
    secrets = held(os.environ, argv, passed)
    reach = in_reach(secrets, user[0] if user else os.geteuid())
    if reach:
        lines = "; ".join(f"{r.name} in {r.where}" for r in reach[:5])
        more = f" (and {len(reach) - 5} more)" if len(reach) > 5 else ""
        raise InputError(
            f"a host workload could read a secret valorch holds: {lines}{more}",
            _ways_out(reach, root_workloads=user is None and os.geteuid() == 0),
        )
    return user


def _ways_out(reach: Sequence[Reach], root_workloads: bool) -> str:
    ways = []
    if any("command line" in r.where for r in reach):
        ways.append(
            "pass the store's URL in VALORCH_DB (or a file) rather than on the command line"
        )
    if root_workloads:
        ways.append(f"run host workloads as another user ({ENV_USER}=nobody)")
    if any("environment of process" in r.where for r in reach):
        ways.append("start valorch from a process that does not hold the secret")
    ways.append("add --host-secrets-visible to run anyway, knowingly")
    return "; ".join(ways)
