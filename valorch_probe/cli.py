"""The probe's command line (``python3 -m valorch_probe``): it parses, then runs the parent
(``supervisor.py``) over the worker (``runner.py``), which import nothing of it.

Commands::

    python3 -m valorch_probe run --suite smoke [--check GLOB]... [--expect JSON]
                                 [--deadline S] [--import-timeout S] [--device auto|cpu]
                                 [--attempts N] [--declare JSON]
    python3 -m valorch_probe list            # the registry as JSON
    python3 -m valorch_probe inventory [--root DIR] [--no-commands] [--no-torch]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import sys
import time
from typing import List

from . import PROBE_VERSION, sandbox
from .loader import catalog, declare, load_suite, select
from .runner import emit
from .supervisor import Supervisor


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="valorch_probe")
    sub = p.add_subparsers(dest="cmd")
    r = sub.add_parser("run")
    r.add_argument("--suite", required=True)
    r.add_argument("--check", action="append", default=[])
    r.add_argument("--expect", default="{}")
    r.add_argument("--deadline", type=float, default=120.0)
    r.add_argument("--import-timeout", type=float, default=300.0)
    r.add_argument("--device", choices=("auto", "cpu"), default="auto")
    r.add_argument("--attempts", type=int, default=1)
    r.add_argument(
        "--declare", default=None, help="JSON: the checks a job declares (suites command, pytest)"
    )
    r.add_argument(
        "--workload-user",
        default="auto",
        help="who runs declared workloads: auto = an unprivileged user when the probe is root "
        "(containers); self = the probe's own user (the host executor); UID:GID = that user, "
        "when the probe is root (the host executor with VALORCH_WORKLOAD_USER)",
    )
    r.add_argument(
        "--parent-pid",
        type=int,
        default=None,
        help="the host executor's pid: the probe ends with it (sandbox.guard_host)",
    )
    sub.add_parser("list")
    sub.add_parser("inventory", add_help=False)  # its own options: valorch_probe.inventory
    return p


def main(argv: List[str]) -> int:
    args, rest = _parser().parse_known_args(argv)
    if args.cmd == "inventory":
        from .inventory import main as inventory_main

        return inventory_main(rest)
    if rest:
        _parser().error("unrecognized arguments: %s" % " ".join(rest))
    if args.cmd == "list":
        sys.stdout.write(json.dumps(catalog(), indent=1) + "\n")
        return 0
    if args.cmd != "run":
        _parser().print_help()
        return 2
    out = sys.stdout
    t0 = time.perf_counter()
    hardening = {"probe": sandbox.harden_self()}
    if os.getpid() != 1 and args.cmd == "run" and args.parent_pid is not None:
        hardening["lifetime"] = sandbox.guard_host(args.parent_pid)
    if args.workload_user not in ("auto", "self"):
        try:
            sandbox.workload_ids(args.workload_user)
        except ValueError as exc:
            emit(out, {"type": "fatal", "message": "bad probe arguments: %s" % exc})
            return 2
    sandbox.configure(os.getpid() == 1, args.workload_user != "self")
    sandbox.make_cache_dirs()  # a GPU task's HOME / MIOpen / Triton / inductor caches on the tmpfs
    if os.getpid() == 1:
        # As a container's init, a signal from inside the container is ignored
        # unless a handler is installed: take Python's SIGINT handler away, so
        # that nothing in the container can interrupt the probe (the engine,
        # outside, still can).
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        args.expect_obj = json.loads(args.expect)
        args.declare_obj = json.loads(args.declare) if args.declare else None
        if args.declare_obj is not None:
            declare(args.suite, args.declare_obj)
        else:
            load_suite(args.suite)  # this suite's check modules only, not every suite's
        s, checks = select(args.suite, args.check)
    except (KeyError, ValueError, TypeError) as exc:
        emit(out, {"type": "fatal", "message": "bad probe arguments: %s" % exc})
        return 2
    emit(
        out,
        {
            "type": "meta",
            "probe_version": PROBE_VERSION,
            "python": platform.python_version(),
            "implementation": platform.python_implementation(),
            "machine": platform.machine(),
            "suite": s.name,
            "framework": s.framework,
            "checks": [c.id for c in checks],
            "hardening": dict(hardening, workloads=sandbox.describe_user()),
        },
    )
    sup = Supervisor(args, checks, out)
    sup.run()
    if sandbox.guarded():  # on a host: whatever a workload left that the probe adopted
        sandbox.kill_descendants()
    emit(
        out,
        {
            "type": "end",
            "workers": sup.workers,
            "import_s": sup.import_s,
            "wall_s": time.perf_counter() - t0,
        },
    )
    return 0
