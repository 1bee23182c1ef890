"""Declared workloads (command checks, pytest) are untrusted: they run with as
little power over the probe as the image allows. As another user where the probe may
change ids (``can_drop``: a process of another uid can neither open the probe's
``/proc/PID/fd/*`` nor signal or trace it, nor rewrite its files), with no inherited
descriptors and capped pipes (``popen_options``, ``Capture``), and killed with everything
they left when they end (``reap``; on the user's own machine ``guard_host``); the probe's
own processes are non-dumpable (``harden_self``).

See docs/architecture.md, "Untrusted workloads", for what holds against whom.
"""

from __future__ import annotations

import contextlib
import glob
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

from . import memory

WORKLOAD_UID = 65534  # nobody: numeric, so that it works without an /etc/passwd entry
WORKLOAD_GID = 65534  # nogroup
PR_SET_DUMPABLE = 4
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
MAX_CAPTURE = 1 << 20  # bytes of each stream kept from its start (matched against regexes)
TAIL_BYTES = 64 * 1024  # bytes of each stream kept from its end
TAIL = 1500  # characters of each stream quoted in messages and logs
DRAIN_S = 2.0  # seconds to read what is left in the pipes once the workload has exited

_can_drop = None  # type: Optional[bool]
_groups = []  # type: List[int]
_settings = {"own_pid_namespace": False, "drop": True, "guarded": False}
_ids = {"uid": WORKLOAD_UID, "gid": WORKLOAD_GID}
_before_workload = set()  # type: set


def workload_ids(text: str) -> None:
    """``--workload-user UID:GID``: the ids workloads run as when the probe may change ids
    (valorch names them on the host: ``VALORCH_WORKLOAD_USER``); ValueError otherwise."""
    uid, _, gid = text.partition(":")
    if not (uid.isdigit() and gid.isdigit()) or int(uid) == 0:
        raise ValueError(
            "--workload-user: expected UID:GID of a user other than root, got %r" % text
        )
    _ids.update(uid=int(uid), gid=int(gid))


def configure(own_pid_namespace: bool, drop: bool = True) -> None:
    """Set by the probe's parent; its forked workers inherit it. ``own_pid_namespace``: the
    parent is PID 1 (a container), where every process of the workload uid is a
    workload's. ``drop``: False when the executor runs the probe on the user's
    own machine (``--workload-user self``): there workloads run as the user, as
    everything else does, and paths such as a root user's home stay reachable."""
    global _can_drop
    _settings.update(own_pid_namespace=bool(own_pid_namespace), drop=bool(drop))
    _can_drop = None


def harden_self() -> str:
    """Make this process non-dumpable: its /proc/PID/fd, mem and environ are then
    closed to every process without CAP_SYS_PTRACE, same uid included. The flag
    is reset by execve, not by fork: the parent sets it, its forked workers keep it.
    Returns what happened."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            return "prctl(PR_SET_DUMPABLE) failed: errno %d" % ctypes.get_errno()
        return "non-dumpable"
    except Exception as exc:  # no ctypes in this image, not Linux: say so, run anyway
        return "prctl unavailable: %s" % type(exc).__name__


def can_drop() -> bool:
    """Whether workloads can run as WORKLOAD_UID here: the probe is root and may
    change ids (CAP_SETUID/CAP_SETGID). Tried once in a forked child."""
    global _can_drop, _groups
    if _can_drop is None:
        _can_drop = False
        if _settings["drop"] and hasattr(os, "geteuid") and os.geteuid() == 0:
            _groups = device_groups()
            pid = os.fork()
            if pid == 0:  # the child only changes its ids and leaves
                code = 1
                try:
                    _drop()
                    code = 0
                finally:
                    os._exit(code)
            _, status = os.waitpid(pid, 0)
            _can_drop = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    return _can_drop


DEVICE_NODES = ("/dev/kfd", "/dev/dri", "/dev/nvidia*")  # GPU device nodes a container may be given


def device_groups(patterns: Sequence[str] = DEVICE_NODES) -> List[int]:
    """The supplementary groups a workload keeps: those of the probe that own a GPU
    device node given to this container (ROCm's video/render via group_add), so that
    GPU workloads still reach their devices; never root's group, nothing else."""
    owners = set()
    for pattern in patterns:
        for path in glob.glob(pattern) + glob.glob(os.path.join(pattern, "*")):
            with contextlib.suppress(OSError):
                owners.add(os.stat(path).st_gid)
    return sorted((owners & set(os.getgroups())) - {0})


def _drop() -> None:
    os.setgroups(_groups)
    os.setgid(_ids["gid"])
    os.setuid(_ids["uid"])


def _prctl(option: int, arg: int) -> bool:
    try:
        import ctypes

        return bool(ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0) == 0)
    except Exception:  # no ctypes in this image, not Linux
        return False


def guard_host(parent_pid: Optional[int]) -> str:
    """On the user's machine (not PID 1): adopt what workloads leave behind (a child
    subreaper) and end with valorch: SIGTERM when the process that started the probe dies,
    whatever killed it (``PR_SET_PDEATHSIG``; ``parent_pid`` closes the race of a parent
    that died before the call). The SIGTERM (and SIGHUP, SIGINT) handler kills everything
    below the probe and exits. Returns what happened."""
    _settings["guarded"] = True
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, _end_everything)
    subreaper = _prctl(PR_SET_CHILD_SUBREAPER, 1)
    deathsig = _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if parent_pid is not None and os.getppid() != parent_pid:
        _end_everything(signal.SIGTERM, None)  # valorch died before the probe could notice
    return "subreaper" if subreaper and deathsig else "subreaper or parent-death signal refused"


def guarded() -> bool:
    return bool(_settings["guarded"])


def guard_worker() -> None:
    """The worker adopts what its workloads leave behind, too (``reap`` kills them)."""
    if _settings["guarded"]:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _end_everything(signum: int, _frame: Any) -> None:
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)
    kill_descendants()
    os._exit(128 + signum)


def _proc_stats() -> Dict[int, List[str]]:
    """Every process's /proc/PID/stat fields after its name: state, parent pid, ..."""
    out = {}  # type: Dict[int, List[str]]
    for entry in os.listdir("/proc"):
        if entry.isdigit():  # a process gone meanwhile is skipped
            with contextlib.suppress(OSError, IndexError), open("/proc/%s/stat" % entry) as fh:
                out[int(entry)] = fh.read().rsplit(")", 1)[1].split()[:2]
    return out


def _live() -> Dict[int, int]:
    """Every live process (neither zombie nor dead) and its parent."""
    return {p: int(f[1]) for p, f in _proc_stats().items() if f[0] not in ("Z", "X")}


def descendants(pid: int) -> List[int]:
    parent = _live()
    found = []  # type: List[int]
    frontier = [pid]
    while frontier:
        current = frontier.pop()
        kids = [p for p, pp in parent.items() if pp == current and p not in found]
        found.extend(kids)
        frontier.extend(kids)
    return found


def kill_descendants(keep: set[int] | None = None) -> int:
    return _kill_all(lambda: descendants(os.getpid()), keep or set())


def _kill_all(listed: Callable[[], Iterable[int]], keep: set[int]) -> int:
    """Kill every process ``listed`` but ``keep``, again until none is left (a forking
    process may add more: each is stopped first, then killed). Returns how many."""
    killed = set()  # type: set
    for _ in range(50):
        victims = [p for p in listed() if p not in keep]
        if not victims:
            break
        for victim in victims:
            with contextlib.suppress(OSError):
                os.kill(victim, signal.SIGSTOP)
        for victim in victims:
            with contextlib.suppress(OSError):
                os.kill(victim, signal.SIGKILL)
                killed.add(victim)
        for victim in victims:  # collect the zombies adopted here
            with contextlib.suppress(OSError):
                os.waitpid(victim, os.WNOHANG)
    return len(killed)


def describe_user() -> str:
    if can_drop():
        return "uid %d" % _ids["uid"] + (
            " (device groups %s)" % ",".join(map(str, _groups)) if _groups else ""
        )
    uid = os.geteuid() if hasattr(os, "geteuid") else -1
    why = (
        "asked to run workloads as the invoking user"
        if not _settings["drop"]
        else "cannot change ids here"
        if uid == 0
        else "not root"
    )
    return "uid %d (the probe's own: %s)" % (uid, why)


def private_dir(prefix: str) -> str:
    """A fresh directory the workload user owns (its HOME, TMPDIR, JUnit output)."""
    path = tempfile.mkdtemp(prefix=prefix)
    if can_drop():
        try:
            os.chown(path, _ids["uid"], _ids["gid"])
        except OSError:  # no CAP_CHOWN: a sticky world-writable directory instead
            os.chmod(path, 0o1777)
    return path


#: The caches a GPU task's environment points at the tmpfs (executors/container.py
#: GPU_CACHE_ENV): the probe creates them, and a workload gets its own under its home.
CACHE_VARS = (
    "XDG_CACHE_HOME",
    "MIOPEN_USER_DB_PATH",
    "MIOPEN_CUSTOM_CACHE_DIR",
    "TRITON_CACHE_DIR",
    "TORCHINDUCTOR_CACHE_DIR",
    "CUDA_CACHE_PATH",
)


def make_cache_dirs() -> List[str]:
    """Create the cache directories the environment names (a library that finds its
    cache directory missing may fail instead of creating it); the ones it could not."""
    failed = []
    for var in CACHE_VARS:
        path = os.environ.get(var)
        if path:
            try:
                os.makedirs(path, exist_ok=True)
            except OSError:
                failed.append(var)
    return failed


def rehome(env: Dict[str, str], home: str) -> None:
    """Point HOME, TMPDIR and the cache variables at a workload's private ``home``: the
    probe's cache directories belong to the probe's user, not the workload's."""
    old = env.get("HOME") or ""
    for var in CACHE_VARS:
        if env.get(var):
            rel = (
                os.path.relpath(env[var], old)
                if old and env[var].startswith(old.rstrip("/") + "/")
                else var.lower()
            )
            env[var] = os.path.join(home, rel)
    env.update(HOME=home, TMPDIR=home)


def popen_options(home: str) -> Dict[str, Any]:
    """How a workload is started: no inherited descriptors, stdin from /dev/null,
    its own pipes, its own session, its own user where one can be had."""
    env = dict(os.environ)
    rehome(env, home)
    opts = {
        "stdin": subprocess.DEVNULL,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.PIPE,
        "close_fds": True,
        "start_new_session": True,
        "env": env,
    }  # type: Dict[str, Any]
    if can_drop():
        env.update(USER="nobody", LOGNAME="nobody")
        if sys.version_info >= (3, 9):  # done in C after fork: safe with threads
            opts.update(user=_ids["uid"], group=_ids["gid"], extra_groups=list(_groups))
        else:
            opts["preexec_fn"] = _drop
    return opts


class Capture:
    """One output stream, bounded: its first MAX_CAPTURE bytes, its last
    TAIL_BYTES, and its size."""

    def __init__(self) -> None:
        self.head = b""
        self.tail = b""
        self.size = 0

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        room = MAX_CAPTURE - len(self.head)
        if room > 0:
            self.head += chunk[:room]
        self.tail = (self.tail + chunk)[-TAIL_BYTES:]

    def result(self) -> Dict[str, Any]:
        text = self.head.decode("utf-8", "replace")
        if self.size > MAX_CAPTURE:
            after = self.tail[-min(TAIL_BYTES, self.size - MAX_CAPTURE) :].decode(
                "utf-8", "replace"
            )
            text += "\n[... %d bytes not shown ...]\n%s" % (self.size - MAX_CAPTURE, after)
        return {"text": text, "bytes": self.size, "tail": text[-TAIL:]}


def run_workload(argv: Sequence[str], timeout: float, cwd: Optional[str] = None) -> Dict[str, Any]:
    """Run an untrusted argv (a list) with a timeout. Returns returncode (None on
    timeout), stdout/stderr (text: head and tail, bytes, tail), duration_s,
    timed_out and user (who it ran as)."""
    home = private_dir("valorch-workload-")
    if _settings["guarded"]:  # what is below the worker now is not this workload's
        _before_workload.clear()
        _before_workload.update(descendants(os.getpid()))
    try:
        t0 = time.monotonic()
        oom_before = memory.oom_kills()
        proc = subprocess.Popen(list(argv), cwd=cwd, **popen_options(home))
        out, err = Capture(), Capture()
        timed_out = _pump(proc, {proc.stdout: out, proc.stderr: err}, t0 + timeout)
        rc = None if timed_out else proc.returncode
        return {
            "returncode": rc,
            "timed_out": timed_out,
            "duration_s": time.monotonic() - t0,
            "stdout": out.result(),
            "stderr": err.result(),
            "user": describe_user(),
            "out_of_memory": memory.killed_for_memory(oom_before, rc),
        }
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _pump(proc: subprocess.Popen[bytes], streams: Dict[Any, Capture], deadline: float) -> bool:
    """Read both pipes into their captures until they close, the deadline passes,
    or the workload has exited and DRAIN_S more have passed (a process it left
    behind may hold the pipes open); then wait for it until the deadline.
    Everything it started is killed on the way out. True when the deadline passed."""
    sel = selectors.DefaultSelector()
    for pipe in streams:
        sel.register(pipe, selectors.EVENT_READ)
    stop = deadline
    try:
        while sel.get_map():
            now = time.monotonic()
            if stop == deadline and proc.poll() is not None:
                reap(proc.pid)  # it exited: what it left behind goes now
                stop = min(deadline, now + DRAIN_S)
            if now >= stop:
                break
            for key, _ in sel.select(timeout=min(stop - now, 0.5)):
                chunk = os.read(key.fd, 65536)
                if chunk:
                    streams[key.fileobj].add(chunk)
                else:
                    sel.unregister(key.fileobj)
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
    finally:
        sel.close()
        reap(proc.pid)
        for pipe in streams:
            pipe.close()
    proc.wait()
    return timed_out


def reap(pid: int) -> None:
    """Kill the workload's process group, and inside a container every process a
    workload left, which catches what left the group (setsid, double fork). Never
    on a host: other services may run as nobody there."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    if not _settings["own_pid_namespace"]:
        if _settings["guarded"]:  # on a host: what this workload left, adopted by the worker
            kill_descendants(keep=set(_before_workload))
        return
    if not can_drop():  # workloads run as the probe's uid: all but the probe's processes go
        _kill_all(_live, {1, os.getpid()})  # (the probe is PID 1, the caller its worker)
        return
    child = os.fork()
    if child == 0:  # as the workload uid, kill(-1) reaches exactly that uid's processes, atomically
        try:
            _drop()
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(child, 0)


def reap_orphans(keep: int) -> int:
    """As a container's init (PID 1), collect the zombies of processes that
    workloads left behind and that were reparented to us; ``keep`` (the worker)
    is left to its own wait. Returns how many were collected."""
    if os.getpid() != 1:
        return 0
    reaped = 0
    for pid, fields in _proc_stats().items():
        if pid != keep and fields == ["Z", "1"]:
            with contextlib.suppress(OSError):  # gone meanwhile, or not our child
                reaped += bool(os.waitpid(pid, os.WNOHANG)[0])
    return reaped
