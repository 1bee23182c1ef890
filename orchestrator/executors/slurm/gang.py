"""A multi-node task's Slurm job, followed to its end: one job (``--nodes=N
--ntasks-per-node=1``) whose batch script finds the rendezvous (``GANG_PRELUDE``) and
``srun`` starts the step, hence the container, on every node. Each rank's probe output
is ``valorch-<job>-<rank>.stdout`` and its step log ``slurm-<job>-<rank>.err``; the
per-rank transcripts merge into one result per check (``executors.gang.merge``).

``srun --kill-on-bad-exit=1`` ends every rank when one fails, ``--wait`` the rest once
one has ended; each step's EXIT trap removes its container; the job ends with them, so
no Slurm job is left behind.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...spec import Execution, HostSpec, Task
from .. import gang
from ..transcript import Transcript, conclude
from .client import SlurmError
from .joblog import digest_of, exit_of, job_failure, parse_job_log, read_log


def follow_gang(
    follow: Callable[[str, float, dict[str, float], list[tuple[Path, Transcript]]], str],
    task: Task,
    job: str,
    workdir: Path,
    limit: float,
    timings: dict[str, float],
    on_result: Callable[[Any], None] | None,
    t0: float,
) -> Execution:
    n = task.node_count
    transcripts = [Transcript(on_result=on_result if r == 0 else None) for r in range(n)]
    outs = [(workdir / f"valorch-{job}-{r}.stdout", t) for r, t in enumerate(transcripts)]
    try:
        state = follow(job, limit, timings, outs)
    except SlurmError as exc:
        return job_failure(task, f"Slurm: {exc}", timings, {"job_id": job, "workdir": str(workdir)})
    job_log = read_log(workdir / f"slurm-{job}.out")
    logs = [read_log(workdir / f"slurm-{job}-{r}.err") for r in range(n)]
    ended = _Ended(job, state, limit, job_log, logs, [parse_job_log(text) for text in logs])
    faults = ended.faults([len(t.results) for t in transcripts])
    runs = [ended.node_run(task, r, transcripts[r], faults) for r in range(n)]
    merged = gang.merge(task, ended.blame_the_job(runs))
    timings["total_s"] = time.perf_counter() - t0
    meta = {
        **merged.meta,
        "slurm": {
            "job_id": job,
            "state": state,
            "workdir": str(workdir),
            "rendezvous": _found(r"^valorch: rendezvous (\S+)", job_log),
            "ranks": ended.infos,
        },
    }
    return merged.model_copy(update={"timings": {**merged.timings, **timings}, "meta": meta})


@dataclass(frozen=True)
class _Faults:
    """Which ranks ``died`` (exited non-zero, or their step ended first), ``hung`` (behind
    the others at the time limit, or still running once another had ended) and were
    ``stopped`` by srun; each rank's container exit code (None: unknown)."""

    codes: tuple[int | None, ...]
    died: frozenset[int]
    hung: frozenset[int]
    stopped: frozenset[int]


@dataclass(frozen=True)
class _Ended:
    """A gang's Slurm job once it ended: its state, the job log and each rank's step log
    and what the step logged about itself (``parse_job_log``)."""

    job: str
    state: str
    limit: float
    job_log: str
    logs: list[str]
    infos: list[dict[str, Any]]

    @property
    def timed_out(self) -> bool:
        return self.state in ("TIMEOUT", "DEADLINE")

    def faults(self, reported: list[int]) -> _Faults:
        """``reported``: how many results each rank's probe reported."""
        n, timed_out = len(self.logs), self.timed_out
        hung = gang.hung_nodes(list(enumerate(reported))) if timed_out else set()
        # ranks srun ended: --kill-on-bad-exit after another failed, or --wait after another ended
        stopped = {int(m) for m in re.findall(r"task (\d+): Killed", self.job_log)} | {
            r for r in range(n) if "valorch-step: signal" in self.logs[r]
        }
        codes = tuple(exit_of(i) for i in self.infos)
        died = {r for r in range(n) if r not in stopped and codes[r] not in (0, None)} | {
            r for r in range(n) if r not in stopped and codes[r] is None and not timed_out
        }
        if not died and not hung and stopped:  # nobody failed, yet srun stopped these: they hung
            hung = stopped
        return _Faults(codes, frozenset(died), frozenset(hung), frozenset(stopped))

    def node_run(self, task: Task, r: int, transcript: Transcript, f: _Faults) -> gang.NodeRun:
        """How rank ``r`` ended: its execution, its fault and why, its node, image and GPUs."""
        info, log, job = self.infos[r], self.logs[r], self.job
        node = _found(r"^valorch-step: rank \d+ of \d+ on (\S+)", log) or (
            task.nodes[r].name if r < len(task.nodes) else f"rank{r}"
        )
        host = next(
            (h for h in task.nodes if h.name == node),
            HostSpec(name=node, endpoint=f"slurm://{node}"),
        )
        killed = (
            f"Slurm job {job} passed its time limit ({self.limit:g}s) and was killed"
            if self.timed_out
            else ("stopped by srun" if r in f.stopped else None)
        )
        execution = conclude(transcript, task, exit_code=f.codes[r], killed=killed, log=log[-8000:])
        fault, why = None, ""
        if r in f.died:
            fault = "died"
            why = (
                f"its container exited with code {f.codes[r]} (Slurm job {job})"
                if f.codes[r] is not None
                else f"its step ended before the container did ({info.get('failed') or self.state})"
            )
        elif r in f.hung:
            fault = "hung"
            why = (
                f"behind the other ranks when job {job} passed its time limit"
                if self.timed_out
                else f"still running {gang.GRACE_S:g}s after another rank had ended (srun --wait)"
            )
        gpus = tuple(int(g) for g in str(info.get("gpus") or "").split(",") if g.isdigit())
        return gang.NodeRun(r, host, execution, fault, why, digest_of(info.get("image")), gpus)

    def blame_the_job(self, runs: list[gang.NodeRun]) -> list[gang.NodeRun]:
        """A job that ended badly with no rank to blame (NODE_FAIL, a cancel): rank 0 died
        of it, named with the job's state."""
        if any(run.fault for run in runs) or self.state == "COMPLETED" or self.timed_out:
            return runs
        first = runs[0]
        blamed = replace(first, fault="died", why=f"Slurm job {self.job} ended {self.state}")
        return [blamed, *runs[1:]]


def _found(pattern: str, log: str) -> str | None:
    """The first group of ``pattern``'s first match in a log, line by line."""
    m = re.search(pattern, log, re.M)
    return m.group(1) if m else None
