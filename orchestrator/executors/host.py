"""The host executor: the probe on the local interpreter, no container.

The embedded default when no engine is there (``valorch run --image host``).
The probe runs from a private copy named ``valorch_probe``, exactly as it does
inside a container.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from .. import proc
from ..spec import CheckResult, Execution, HostSpec, Task
from . import hostenv, hostguard
from .base import PROBE_PACKAGE, overall_timeout, probe_args, probe_copy, ship_workload
from .container import local_env
from .transcript import Transcript, conclude, infrastructure_failure


class HostExecutor:
    name = "host"

    def __init__(self, host: HostSpec, python: str | None = None) -> None:
        self.host = host
        self.python = python or sys.executable
        self._pid: int | None = None
        self._cancelled = False

    def _spawned(self, pid: int) -> None:
        self._pid = pid
        if self._cancelled:  # cancelled while it started
            proc.kill_tree(pid)

    def cancel(self) -> None:
        """Kill the probe and everything below it (its workloads run in sessions of their
        own): an interrupted batch leaves nothing running (scheduling/flight.Flight.stop)."""
        self._cancelled = True
        if self._pid is not None:
            proc.kill_tree(self._pid)

    def execute(
        self,
        task: Task,
        run_id: str,
        on_result: Callable[[CheckResult], None] | None = None,
        on_started: Callable[[], None] | None = None,
    ) -> Execution:
        t0 = time.perf_counter()
        transcript = Transcript(on_result=on_result)

        with probe_copy() as tmp:
            ship_workload(task, Path(tmp))
            env = local_env(tmp, task.suite.pass_env)
            # Workloads run as the invoking user here, or as VALORCH_WORKLOAD_USER where valorch
            # is root; valorch itself is non-dumpable, and the probe ends with it and takes
            # along whatever a workload left (docs/architecture.md, "Untrusted workloads").
            hostguard.harden()
            user = hostguard.workload_user()
            if user is not None:  # the workload's user reaches the probe's copy and its cwd
                Path(tmp).chmod(0o755)
            argv = [
                self.python,
                "-m",
                PROBE_PACKAGE,
                *probe_args(task),
                "--workload-user",
                f"{user[0]}:{user[1]}" if user else "self",
                "--parent-pid",
                str(os.getpid()),
            ]
            if on_started is not None:  # all that is left here is the probe process's start
                on_started()
            done = proc.stream(
                argv,
                transcript.feed,
                timeout=overall_timeout(task),
                env=env,
                cwd=tmp,
                spawned=self._spawned,
            )
            self._pid = None  # reaped: the pid may be another process's from now on
        transcript.close()
        timings = {
            "run_s": time.perf_counter() - t0,
            "total_s": time.perf_counter() - t0,
            **transcript.breakdown(),
        }
        if done.error:
            return infrastructure_failure(
                task, f"cannot start {self.python}: {done.error}", timings=timings
            )
        killed = (
            f"the probe passed its deadline of {overall_timeout(task):g}s and was killed"
            if done.timed_out
            else None
        )
        execution = conclude(
            transcript,
            task,
            exit_code=done.returncode,
            killed=killed,
            log=done.stderr_tail,
            signalled=(done.returncode or 0) < 0,
            # a signal valorch did not send (no deadline, no cancel): a workload's
            killed_from_inside=(done.returncode or 0) < 0
            and not done.timed_out
            and not self._cancelled,
            python=self.python,
        )
        return _scrubbed(execution).model_copy(update={"timings": timings})


def _scrubbed(execution: Execution) -> Execution:
    """``execution`` with valorch's secrets (``hostenv.secret_values``) scrubbed from every
    message, log and text metric: a workload here ran in valorch's own environment."""
    secrets = hostenv.secret_values()
    if not secrets:
        return execution

    def clean(result: CheckResult) -> CheckResult:
        metrics = {
            k: hostenv.scrub(v, secrets) if isinstance(v, str) else v
            for k, v in result.metrics.items()
        }
        return result.model_copy(
            update={
                "message": hostenv.scrub(result.message, secrets),
                "log": hostenv.scrub(result.log, secrets),
                "metrics": metrics,
            }
        )

    update: dict[str, object] = {"results": tuple(clean(r) for r in execution.results)}
    if execution.infra_error:
        update["infra_error"] = hostenv.scrub(execution.infra_error, secrets)
    return execution.model_copy(update=update)
