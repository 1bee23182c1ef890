"""Submit tasks to an existing Slurm cluster.

A task's hardware needs become ``sbatch`` options: the GPU count (and GRES type)
becomes ``--gres=gpu[:type]:N``, the backend, allowed archs and labels become a
``--constraint`` expression over node features (``rocm&(gfx90a|gfx942)&fast``).
The batch script maps the GPUs Slurm assigned into environment variables and runs
one argv (the job step starts the container on the allocated node; no Docker code
lives here). Everything that talks to Slurm goes through :func:`run_slurm`.

Slurm refuses at submit a constraint naming a feature no node has ("Invalid
feature specification") and a GRES no node can offer ("Requested node
configuration is not available"); a constraint of known features that no single
node has together pends with reason ``BadConstraints`` forever. All three are
"unmatched" (:class:`SlurmUnmatched`), never a silent wait.
https://slurm.schedmd.com/sbatch.html#OPT_constraint
"""

from __future__ import annotations

import math
import os
import re
import shlex
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ... import proc
from ...errors import InfrastructureError, NoMatchingHostError

if TYPE_CHECKING:
    from ...spec import Backend

FEATURE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
CUDA_CC = re.compile(r"^(\d+)\.(\d+)$")

TERMINAL = frozenset(
    {
        "COMPLETED",
        "FAILED",
        "CANCELLED",
        "TIMEOUT",
        "NODE_FAIL",
        "OUT_OF_MEMORY",
        "PREEMPTED",
        "BOOT_FAIL",
        "DEADLINE",
        "REVOKED",
    }
)
# Pending reasons that no amount of waiting will change.
UNMATCHED_REASONS = frozenset({"BadConstraints", "PartitionConfig", "PartitionNodeLimit"})
# sbatch's messages when no node could ever satisfy the request.
UNMATCHED_SUBMIT = (
    "Invalid feature specification",
    "Requested node configuration is not available",
    "Invalid generic resource (gres) specification",
)


class SlurmError(InfrastructureError):
    """A Slurm command failed, timed out or is missing (exit 3)."""


class SlurmUnmatched(SlurmError, NoMatchingHostError):  # noqa: N818  # scheduling catches it
    """No node of the cluster can ever run the job."""


@dataclass(frozen=True)
class SlurmRequirement:
    """What a task needs from a node. ``archs`` are alternatives (any one will do);
    ``labels`` are required node features. CUDA compute capabilities may be given
    as ``9.0`` and become ``sm_90``, the spelling of node features."""

    backend: Backend | Literal["rocm", "cuda", "cpu"]  # checked below
    archs: tuple[str, ...] = ()
    gpus: int = 0
    labels: tuple[str, ...] = ()
    gpu_type: str | None = None  # a GRES type (mi300x, h100), not an arch
    nodes: int = 1  # a multi-node task: --nodes=N --ntasks-per-node=1 (GPUs and features per node)

    def __post_init__(self) -> None:
        if self.backend not in ("rocm", "cuda", "cpu"):
            raise ValueError(f"unknown backend {self.backend!r}: expected rocm, cuda or cpu")
        archs = tuple(_arch_feature(a, self.backend) for a in self.archs)
        object.__setattr__(self, "archs", tuple(dict.fromkeys(archs)))
        object.__setattr__(self, "labels", tuple(dict.fromkeys(self.labels)))
        for name in (*self.archs, *self.labels, *((self.gpu_type,) if self.gpu_type else ())):
            if not FEATURE.match(name):
                raise ValueError(
                    f"{name!r} is not a valid Slurm feature/GRES name (letters, digits, _ . -)"
                )
        if self.backend == "cpu":
            if self.gpus or self.archs or self.gpu_type:
                raise ValueError("a cpu requirement takes no GPUs, archs or GPU type")
        elif self.gpus < 1:
            raise ValueError(
                f"a {self.backend} requirement needs at least one GPU (gpus={self.gpus})"
            )


def _arch_feature(arch: str, backend: str) -> str:
    arch = arch.strip().lower()
    m = CUDA_CC.match(arch)
    if m and backend == "cuda":
        return f"sm_{m.group(1)}{m.group(2)}"
    return arch


def constraint(req: SlurmRequirement, available: frozenset[str] | None = None) -> str | None:
    """The ``--constraint`` expression, or None when anything goes. With the cluster's ``available``
    features, alternatives no node has are dropped (Slurm refuses the whole expression otherwise)
    and a requirement left with nothing raises :class:`SlurmUnmatched` naming what exists."""
    required = ([req.backend] if req.backend != "cpu" else []) + list(req.labels)
    archs = list(req.archs)
    if available is not None:
        missing = [f for f in required if f not in available]
        if missing:
            raise SlurmUnmatched(
                f"no Slurm node has the feature(s) {', '.join(missing)}",
                hint=f"features on the cluster: {', '.join(sorted(available)) or 'none'}",
            )
        known = [a for a in archs if a in available]
        if archs and not known:
            raise SlurmUnmatched(
                f"no Slurm node has any of the archs {', '.join(archs)}",
                hint=f"features on the cluster: {', '.join(sorted(available)) or 'none'}",
            )
        archs = known
    terms = list(required)
    if len(archs) == 1:
        terms.append(archs[0])
    elif archs:
        terms.append("(" + "|".join(archs) + ")")
    return "&".join(terms) or None


def gres(req: SlurmRequirement) -> str | None:
    if not req.gpus:
        return None
    return f"gpu:{req.gpu_type}:{req.gpus}" if req.gpu_type else f"gpu:{req.gpus}"


def time_limit(deadline_s: float) -> str:
    """Slurm counts time limits in whole minutes: round up, never below one."""
    if deadline_s <= 0:
        raise ValueError(f"deadline must be positive, got {deadline_s}")
    return str(max(1, math.ceil(deadline_s / 60)))


def job_name(task_name: str) -> str:
    return "valorch-" + (re.sub(r"[^A-Za-z0-9_.\-]+", "-", task_name).strip("-")[:100] or "task")


def sbatch_argv(
    task_name: str,
    requirement: SlurmRequirement,
    deadline_s: float,
    workdir: str | Path,
    script_path: str | Path,
    partition: str | None = None,
    *,
    available_features: frozenset[str] | None = None,
) -> list[str]:
    """The ``sbatch`` command line. Slurm's own log (the script's stderr) goes to
    ``<workdir>/slurm-<jobid>.out``; the command's stdout to the file the batch
    script names. No requeue: a node failure is reported, and retried by the
    scheduler, not silently rerun by Slurm."""
    workdir = str(workdir)
    if "%" in workdir:
        raise ValueError(f"workdir {workdir!r} contains '%', which Slurm expands in --output")
    argv = [
        "sbatch",
        "--parsable",
        f"--job-name={job_name(task_name)}",
        f"--chdir={workdir}",
        f"--output={os.path.join(workdir, 'slurm-%j.out')}",
        "--no-requeue",
        f"--time={time_limit(deadline_s)}",
    ]
    if requirement.nodes > 1:  # one task (one probe, one container) on each of N nodes
        argv[5:5] = [f"--nodes={requirement.nodes}", "--ntasks-per-node=1"]
    else:
        argv.insert(5, "--ntasks=1")
    if partition:
        argv.append(f"--partition={partition}")
    if g := gres(requirement):
        argv.append(f"--gres={g}")
    if c := constraint(requirement, available_features):
        argv.append(f"--constraint={c}")
    argv.append(str(script_path))
    return argv


# A multi-node job's rendezvous, in its batch script (on the first node of the allocation):
# the first host of SLURM_JOB_NODELIST (`scontrol show hostnames`), reached at its NodeAddr,
# and a port from the job id, checked free there (bash's /dev/tcp: an answer means taken).
GANG_PRELUDE = r"""
first=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
addr=$(scontrol show node -o "$first" | tr ' ' '\n' | sed -n 's/^NodeAddr=//p')
export VALORCH_MASTER_ADDR="${addr:-$first}"
port=$((29500 + ${SLURM_JOB_ID:-0} % 400))
for _ in $(seq 1 50); do
  if (exec 3<>"/dev/tcp/$VALORCH_MASTER_ADDR/$port") 2>/dev/null; then port=$((port + 1)); else break; fi
done
export VALORCH_MASTER_PORT=$port
echo "valorch: rendezvous $VALORCH_MASTER_ADDR:$VALORCH_MASTER_PORT nodes=$SLURM_JOB_NODELIST" >&2
"""


def batch_script(command_argv: Sequence[str], prelude: str = "", after: Sequence[str] = ()) -> str:
    """A bash batch script running ``command_argv`` with its stdout in
    ``valorch-<jobid>.stdout`` in the job's directory. ``VALORCH_GPUS`` gets the
    allocation's GPU indices as Slurm numbers them on the node (``SLURM_JOB_GPUS``, or
    ``SLURM_STEP_GPUS`` inside a step); the runtime variables Slurm sets itself
    (``ROCR_VISIBLE_DEVICES``, ``CUDA_VISIBLE_DEVICES``) are kept, and filled from those
    indices when the cluster's Slurm does not set them. Every argument and value is quoted."""
    if not command_argv:
        raise ValueError("empty command")
    lines = [
        "#!/bin/bash",
        "# Generated by valorch (orchestrator/executors/slurm/client.py); do not edit.",
        "set -u",
        'gpus="${SLURM_JOB_GPUS:-${SLURM_STEP_GPUS:-${ROCR_VISIBLE_DEVICES:-${CUDA_VISIBLE_DEVICES:-}}}}"',
        'export VALORCH_GPUS="$gpus"',
        'if [ -n "$gpus" ]; then',
        '  export ROCR_VISIBLE_DEVICES="${ROCR_VISIBLE_DEVICES:-$gpus}"',
        '  export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-$gpus}"',
        "fi",
    ]
    out = '"valorch-${SLURM_JOB_ID}.stdout"'
    if prelude:  # constant text (GANG_PRELUDE), never anything of a task
        lines.append(prelude.strip("\n"))
    lines.append(
        'echo "valorch: job ${SLURM_JOB_ID:-?} on ${SLURMD_NODENAME:-?} gpus=${VALORCH_GPUS:-none}" >&2'
    )
    if after:  # a command that must run once the main one has ended, still inside the allocation
        lines += [
            f"{shlex.join(command_argv)} >{out}",
            "rc=$?",
            f"{shlex.join(after)} >/dev/null 2>&1 || true",
            'exit "$rc"',
            "",
        ]
    else:
        lines += [f"exec {shlex.join(command_argv)} >{out}", ""]
    return "\n".join(lines)


def run_slurm(
    argv: Sequence[str],
    *,
    timeout: float = 30.0,
    env: Mapping[str, str] | None = None,
    check: bool = True,
) -> proc.Completed:
    """Run a Slurm command through :mod:`orchestrator.proc` (an argv list, never a shell,
    with a timeout); a missing binary, a hang or (with ``check``) a non-zero exit become a
    :class:`SlurmError` carrying Slurm's own message."""
    argv = [str(a) for a in argv]
    done = proc.call(argv, timeout=timeout, env=dict(env) if env is not None else None)
    if done.error and done.returncode is None:
        if done.error.endswith("not found"):
            raise SlurmError(
                f"{argv[0]} is not installed",
                hint="install Debian's slurm-client, or run scripts/start-slurm.sh for a test cluster",
            )
        if "timed out" in done.error:
            raise SlurmError(
                f"`{shlex.join(argv)}` did not finish within {timeout:g} s",
                hint="is slurmctld up? try `scontrol ping`",
            )
        raise SlurmError(f"`{shlex.join(argv)}` could not run: {done.error}")
    if check and done.returncode != 0:
        message = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise SlurmError(f"`{shlex.join(argv)}` failed (exit {done.returncode}): {message}")
    return done


def _first_word(text: str) -> str:
    words = text.split()
    return words[0].rstrip("+") if words else ""


class SlurmCluster:
    """A Slurm cluster reached through its command-line clients on this machine.
    ``conf`` points them to a slurm.conf other than the default (``SLURM_CONF``)."""

    def __init__(
        self, conf: str | Path | None = None, partition: str | None = None, timeout: float = 30.0
    ) -> None:
        self.conf = str(conf) if conf else None
        self.partition = partition
        self.timeout = timeout

    def _run(self, *argv: str, check: bool = True) -> proc.Completed:
        env = {**os.environ, "SLURM_CONF": self.conf} if self.conf else None
        return run_slurm(argv, timeout=self.timeout, env=env, check=check)

    def sinfo(self, *args: str) -> str:
        """``sinfo -h`` over the partition (or the whole cluster)."""
        part = [f"--partition={self.partition}"] if self.partition else []
        return self._run("sinfo", "-h", *args, *part).stdout

    def features(self) -> frozenset[str]:
        """Every node feature of the partition (or the whole cluster)."""
        out = self.sinfo("-o", "%f")
        return frozenset(f for line in out.split() for f in line.split(",") if f and f != "(null)")

    def submit(
        self,
        task_name: str,
        requirement: SlurmRequirement,
        command_argv: Sequence[str],
        workdir: str | Path,
        deadline_s: float,
        after: Sequence[str] = (),
    ) -> str:
        """Write the batch script into ``workdir`` (which the nodes must see) and submit it; returns
        the job id. Raises :class:`SlurmUnmatched` when no node can ever run it."""
        workdir = Path(workdir)
        available = self.features()  # before the script exists: a failing sinfo leaves none
        fd, script = tempfile.mkstemp(
            prefix=job_name(task_name) + "-", suffix=".sbatch", dir=workdir
        )
        with os.fdopen(fd, "w") as fh:
            fh.write(
                batch_script(command_argv, GANG_PRELUDE if requirement.nodes > 1 else "", after)
            )
        argv = sbatch_argv(
            task_name,
            requirement,
            deadline_s,
            workdir,
            script,
            self.partition,
            available_features=available,
        )
        try:
            out = self._run(*argv).stdout
        except SlurmError as exc:
            if any(marker in exc.message for marker in UNMATCHED_SUBMIT):
                raise SlurmUnmatched(
                    f"Slurm refused {task_name}: no node matches {requirement}", hint=exc.message
                ) from None
            raise
        job_id = out.strip().split(";")[0]
        if not job_id.isdigit():
            raise SlurmError(f"sbatch printed no job id: {out.strip()!r}")
        return job_id

    def show(self, job_id: str) -> dict[str, str]:
        """``scontrol show job`` as a dict (values that hold spaces are cut at the
        first one; the fields read here never hold any)."""
        out = self._run("scontrol", "show", "job", "-o", str(job_id)).stdout
        return {m[1]: m[2] for m in re.finditer(r"(?:^|\s)([A-Za-z:/]+)=(\S*)", out)}

    def state(self, job_id: str) -> str:
        """PENDING, RUNNING, COMPLETED, FAILED, CANCELLED ... from squeue while the
        job is queued, else accounting (sacct), else the controller's memory
        (scontrol; sacct fails when accounting storage is not configured)."""
        proc = self._run("squeue", "-h", "-j", str(job_id), "-o", "%T", check=False)
        if proc.returncode == 0 and (state := _first_word(proc.stdout)):
            return state
        proc = self._run("sacct", "-n", "-P", "-X", "-j", str(job_id), "-o", "State", check=False)
        if proc.returncode == 0 and (state := _first_word(proc.stdout)):
            return state
        try:
            fields = self.show(job_id)
        except SlurmError as exc:
            raise SlurmError(f"Slurm knows no job {job_id}", hint=exc.message) from None
        return fields.get("JobState", "UNKNOWN")

    def reason(self, job_id: str) -> str:
        """Why a job waits (``Resources``, ``Priority``, ``BadConstraints``), or ``None``."""
        proc = self._run("squeue", "-h", "-j", str(job_id), "-o", "%r", check=False)
        if proc.returncode == 0 and proc.stdout.strip():
            return proc.stdout.strip()
        return self.show(job_id).get("Reason", "None")

    def cancel(self, job_id: str) -> None:
        self._run("scancel", str(job_id))

    def watch(
        self,
        job_id: str,
        *,
        queue_timeout: float,
        run_timeout: float,
        poll: float = 0.5,
        on_tick: Callable[[str], None] | None = None,
    ) -> str:
        """The one polling loop over a job: returns its final state, calling ``on_tick(state)``
        on every poll (and once more at the end) so a caller can follow the job's output.
        A job pending for a reason that cannot go away is :class:`SlurmUnmatched`; one pending
        longer than ``queue_timeout``, or running longer than ``run_timeout``, is
        :class:`SlurmError` (the job is left alone: the caller decides whether to cancel)."""
        queued = time.monotonic()
        started: float | None = None
        self.timings: dict[str, float] = {}
        while True:
            state = self.state(job_id)
            now = time.monotonic()
            if state == "PENDING":
                if (why := self.reason(job_id)) in UNMATCHED_REASONS:
                    raise SlurmUnmatched(
                        f"Slurm job {job_id} can never start ({why}): no node has all the "
                        "requested features and GPUs together"
                    )
                if now - queued > queue_timeout:
                    raise SlurmError(
                        f"Slurm job {job_id} still pending ({why}) after {queue_timeout:g} s"
                    )
            elif started is None:
                started = now
                self.timings["queue_s"] = now - queued
            if on_tick:
                on_tick(state)
            if state in TERMINAL:
                self.timings["run_s"] = now - (started or now)
                return state
            if started is not None and now - started > run_timeout:
                raise SlurmError(
                    f"Slurm job {job_id} still {state} {run_timeout:g} s after it started"
                )
            time.sleep(poll)
