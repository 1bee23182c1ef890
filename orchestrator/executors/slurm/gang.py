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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...spec import Execution, HostSpec, Task
from .. import gang
from ..transcript import Transcript, conclude
from .client import SlurmError

if TYPE_CHECKING:
    from .executor import SlurmExecutor


def follow_gang(
    executor: SlurmExecutor,
    task: Task,
    job: str,
    workdir: Path,
    limit: float,
    timings: dict[str, float],
    on_result: Callable[[Any], None] | None,
    t0: float,
) -> Execution:
    from .executor import _cancel_quietly, _digest, _feed, _infra, _read, parse_job_log

    n = task.node_count
    transcripts = [Transcript(on_result=on_result if r == 0 else None) for r in range(n)]
    offsets = [0] * n

    def tick(_state: str) -> None:
        for r in range(n):
            offsets[r] = _feed(workdir / f"valorch-{job}-{r}.stdout", offsets[r], transcripts[r])

    try:
        state = executor.cluster.watch(
            job,
            queue_timeout=executor.queue_timeout,
            run_timeout=limit + 120,
            poll=executor.poll,
            on_tick=tick,
        )
        timings.update(executor.cluster.timings)
    except KeyboardInterrupt:
        _cancel_quietly(executor, job)
        raise
    except SlurmError as exc:
        _cancel_quietly(executor, job)
        return _infra(task, f"Slurm: {exc}", timings, {"job_id": job, "workdir": str(workdir)})
    tick(state)
    for t in transcripts:
        t.close()
    job_log = _read(workdir / f"slurm-{job}.out")
    logs = [_read(workdir / f"slurm-{job}-{r}.err") for r in range(n)]
    infos = [parse_job_log(text) for text in logs]
    timed_out = state in ("TIMEOUT", "DEADLINE")
    hung = (
        gang.hung_nodes([(r, len(transcripts[r].results)) for r in range(n)])
        if timed_out
        else set()
    )
    # ranks srun ended: --kill-on-bad-exit after another failed, or --wait after another ended
    stopped = {int(m) for m in re.findall(r"task (\d+): Killed", job_log)} | {
        r for r in range(n) if "valorch-step: signal" in logs[r]
    }
    codes = [
        int(i["exit"]) if str(i.get("exit", "")).lstrip("-").isdigit() else None for i in infos
    ]
    died = {r for r in range(n) if r not in stopped and codes[r] not in (0, None)} | {
        r for r in range(n) if r not in stopped and codes[r] is None and not timed_out
    }
    if not died and not hung and stopped:  # nobody failed, yet srun had to stop these: they hung
        hung = stopped
    runs = []
    for r in range(n):
        info, log = infos[r], logs[r]
        node = _node_name(log) or (task.nodes[r].name if r < len(task.nodes) else f"rank{r}")
        host = next(
            (h for h in task.nodes if h.name == node),
            HostSpec(name=node, endpoint=f"slurm://{node}"),
        )
        killed = (
            f"Slurm job {job} passed its time limit ({limit:g}s) and was killed"
            if timed_out
            else ("stopped by srun" if r in stopped else None)
        )
        execution = conclude(
            transcripts[r], task, exit_code=codes[r], killed=killed, log=log[-8000:]
        )
        fault, why = None, ""
        if r in died:
            fault, why = (
                "died",
                (
                    f"its container exited with code {codes[r]} (Slurm job {job})"
                    if codes[r] is not None
                    else f"its step ended before the container did ({info.get('failed') or state})"
                ),
            )
        elif r in hung:
            fault, why = (
                "hung",
                (
                    f"behind the other ranks when job {job} passed its time limit"
                    if timed_out
                    else f"still running {gang.GRACE_S:g}s after another rank had ended (srun --wait)"
                ),
            )
        runs.append(
            gang.NodeRun(
                r,
                host,
                execution,
                fault,
                why,
                _digest(info.get("image")),
                tuple(int(g) for g in str(info.get("gpus") or "").split(",") if g.isdigit()),
            )
        )
    if not any(run.fault for run in runs) and state not in ("COMPLETED",) and not timed_out:
        first = runs[0]  # ended badly with no rank to blame: the job itself (NODE_FAIL, a cancel)
        runs[0] = gang.NodeRun(
            0,
            first.host,
            first.execution,
            "died",
            f"Slurm job {job} ended {state}",
            first.digest,
            first.gpus,
        )
    merged = gang.merge(task, runs)
    timings["total_s"] = time.perf_counter() - t0
    meta = {
        **merged.meta,
        "slurm": {
            "job_id": job,
            "state": state,
            "workdir": str(workdir),
            "rendezvous": _rendezvous(job_log),
            "ranks": infos,
        },
    }
    return merged.model_copy(update={"timings": {**merged.timings, **timings}, "meta": meta})


def _node_name(log: str) -> str | None:
    m = re.search(r"^valorch-step: rank \d+ of \d+ on (\S+)", log, re.M)
    return m.group(1) if m else None


def _rendezvous(job_log: str) -> str | None:
    m = re.search(r"^valorch: rendezvous (\S+)", job_log, re.M)
    return m.group(1) if m else None
