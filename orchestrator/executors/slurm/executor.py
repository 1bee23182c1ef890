"""The slurm executor: one ``sbatch`` job per (image, suite) task.

Slurm places the job (``--gres=gpu[:type]:N``, ``--constraint`` over node
features, ``--time`` from the task's deadline); the batch step then runs the
container on the allocated node with the node's own Docker engine:

1. ``docker create`` with the same security defaults as the docker executor
   (no network unless the suite asks, no new privileges, bounded pids) and the
   devices of the GPUs Slurm assigned (``SLURM_JOB_GPUS`` → ``/dev/kfd`` +
   ``/dev/dri/renderD<128+i>`` for ROCm, ``--gpus device=i`` for CUDA; devices
   that do not exist on the node are not passed, and say so in the job log);
2. ``docker cp -`` of the probe archive from the shared spool directory (no bind
   mount of a path that may not exist on the node);
3. ``docker start -a``: the probe's stdout is the job's stdout file;
4. ``docker rm -f`` in an EXIT trap: the container is always removed, also on
   ``scancel`` and at the time limit.

The results come back by parsing the job's stdout file with
:class:`~orchestrator.executors.transcript.Transcript`, while the job runs. Every value the
task contributes reaches the node as a separate argv element (quoted by
``batch_script``); the step script itself is constant text.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...spec import Execution, HostSpec, Task
from .. import gang
from ..base import overall_timeout, probe_archive, probe_args
from ..container import RDMA_CAPS, RDMA_ULIMITS, probe_command, task_container
from ..gang import GRACE_S, collective_timeout
from ..transcript import Transcript, complete, conclude, infrastructure_failure, vetted
from .client import SlurmCluster, SlurmError, SlurmRequirement, SlurmUnmatched

SETUP_ALLOWANCE = 120.0  # seconds for docker create/cp/rm around the probe's own deadline
QUEUE_TIMEOUT = 6 * 3600.0  # seconds a job may wait for resources before it is cancelled

# Runs on the node. Arguments: backend, probe tar, pull policy, N, N docker-create
# options, the RDMA nodes (comma-separated; empty: none), M, M RDMA options, image,
# command... Constant text: nothing from a task is interpolated.
STEP = r"""
set -u
backend=$1 probe=$2 pull=$3 n=$4
shift 4
opts=("${@:1:$n}")
shift "$n"
rnodes=$1 m=$2
shift 2
ropts=("${@:1:$m}")
shift "$m"
image=$1
shift
log() { echo "valorch-step: $*" >&2; }
# The digest that names the image on every engine (imageref.identity): the manifest digest
# the engine recorded for the image's own repository, else the image id; never a
# RepoDigest of another repository the same image was once pushed to.
image_digest() {
  local repo=${image%@*} d
  case ${repo##*/} in *:*) repo=${repo%:*} ;; esac
  repo=${repo#docker.io/}; repo=${repo#library/}
  d=$(docker image inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "$image" 2>/dev/null \
      | awk -v r="$repo@" 'index($0, r) == 1 { print substr($0, length(r) + 1); exit }')
  [ -n "$d" ] || d=$(image_id)
  echo "$d"
}
# The image's id, the digest of its config: the same on a node that pulled it and one that loaded it.
image_id() { docker image inspect --format '{{.Id}}' "$image" 2>/dev/null; }
node=${SLURMD_NODENAME:-$(hostname)}
IFS=, read -r -a idx <<<"${VALORCH_GPUS:-}"
dev=() env=() visible=""
for i in "${!idx[@]}"; do
  case ${idx[$i]} in ''|*[!0-9]*) log "ignoring GPU index '${idx[$i]}'"; continue ;; esac
  visible="${visible:+$visible,}$i"
done
gid() { getent group "$1" | cut -d: -f3; }
case $backend in
  rocm)
    if [ -c /dev/kfd ]; then dev+=(--device /dev/kfd); else log "no /dev/kfd on $node"; fi
    for g in "${idx[@]}"; do
      case $g in ''|*[!0-9]*) continue ;; esac
      r=/dev/dri/renderD$((128 + g))
      if [ -c "$r" ]; then dev+=(--device "$r"); else log "no $r on $node"; fi
    done
    if [ ${#dev[@]} -gt 0 ]; then
      for grp in video render; do v=$(gid $grp); [ -n "$v" ] && dev+=(--group-add "$v"); done
      dev+=(--security-opt seccomp=unconfined)
    fi
    env+=(-e "ROCR_VISIBLE_DEVICES=$visible")
    ;;
  cuda)
    ok=1
    for g in "${idx[@]}"; do [ -c "/dev/nvidia$g" ] || { log "no /dev/nvidia$g on $node"; ok=0; }; done
    if [ ${#idx[@]} -gt 0 ] && [ $ok = 1 ]; then dev+=(--gpus "\"device=${VALORCH_GPUS}\""); fi
    env+=(-e "CUDA_VISIBLE_DEVICES=$visible")
    ;;
esac
# RDMA, on a node the administrator opted in (feature rdma): its verbs devices as found here,
# and the options valorch passed (IPC_LOCK, memlock)
rdma=0
case ",$rnodes," in
  *",$node,"*)
    rdma=1
    for d in /dev/infiniband/uverbs* /dev/infiniband/rdma_cm; do
      if [ -c "$d" ]; then dev+=(--device "$d:$d:rwm"); fi
    done
    ls /dev/infiniband/uverbs* >/dev/null 2>&1 || log "rdma: no verbs device under /dev/infiniband on $node"
    dev+=(${ropts[@]+"${ropts[@]}"})
    ;;
esac
env+=(-e "VALORCH_GPUS=${VALORCH_GPUS:-}" -e "VALORCH_SLURM_JOB=${SLURM_JOB_ID:-}")
if [ -n "${VALORCH_MASTER_ADDR:-}" ]; then  # one rank of a multi-node task (srun, one task per node)
  digest=$(image_digest)
  env+=(-e "MASTER_ADDR=$VALORCH_MASTER_ADDR" -e "MASTER_PORT=$VALORCH_MASTER_PORT" -e "WORLD_SIZE=${SLURM_NTASKS:-1}"
        -e "RANK=${SLURM_PROCID:-0}" -e "LOCAL_RANK=${SLURM_LOCALID:-0}" -e "NODE_RANK=${SLURM_NODEID:-0}"
        -e "VALORCH_NODE=$node" -e "VALORCH_IMAGE_DIGEST=$digest"
        -e "VALORCH_IMAGE_ID=$(image_id)"
        -e "VALORCH_COLLECTIVE_TIMEOUT=${VALORCH_COLLECTIVE_TIMEOUT:-60}")
  log "rank ${SLURM_PROCID:-0} of ${SLURM_NTASKS:-1} on $node"
fi
cid=$(docker create --pull "$pull" "${opts[@]}" ${dev[@]+"${dev[@]}"} "${env[@]}" "$image" "$@") \
  || { log "create-failed on $node"; exit 125; }
trap 'docker rm -f "$cid" >/dev/null 2>&1' EXIT
trap 'log "signal"; exit 143' TERM INT HUP
log "container $cid"
docker inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$cid" \
  | grep -E '^((ROCR|CUDA|HIP)_VISIBLE_DEVICES|VALORCH_GPUS)=' | sed 's/^/valorch-step: env /' >&2
if [ $rdma = 1 ]; then  # as the engine recorded it
  docker inspect --format '{{json .HostConfig.CapAdd}} {{json .HostConfig.Ulimits}} {{json .HostConfig.Devices}}' "$cid" \
    | while read -r granted; do log "rdma on $node $granted"; done
fi
log "image $(image_digest)"
docker cp - "$cid:/opt" <"$probe" || { log "copy-failed on $node"; exit 125; }
docker start -a "$cid" </dev/null &
wait $!
rc=$(docker inspect --format '{{.State.ExitCode}}' "$cid")
log "exit $rc"
exit "$rc"
"""


# --- one task → one job ------------------------------------------------------------------------


def requirement(
    task: Task, labels: tuple[str, ...] = (), gpu_type: str | None = None
) -> SlurmRequirement:
    if task.cpu_only or task.image.backend == "cpu":
        return SlurmRequirement("cpu", labels=labels, nodes=task.node_count)
    return SlurmRequirement(
        task.image.backend,
        archs=tuple(getattr(task.image, "archs", ()) or ()),
        gpus=task.suite.gpus_per_node or 1,
        labels=labels,
        gpu_type=gpu_type,
        nodes=task.node_count,
    )


def create_options(task: Task, run_id: str) -> list[str]:
    """``docker create`` options (pure): the docker executor's container for the task (its user,
    capabilities and environment per backend: a GPU task keeps uid 0, a CPU task with no workload
    runs as 65534), less the devices, which are added on the node."""
    spec = task_container(task, run_id, devices=False)
    flags = spec.docker_flags()
    if task.nodes:  # the ranks meet at the nodes' addresses
        at = flags.index("--network")
        flags[at + 1] = "host"
    if not task.cpu_only and task.image.backend != "cpu":
        flags += ["--shm-size", "8g"]
    return flags


def rdma_options(task: Task, rdma_nodes: tuple[str, ...]) -> tuple[str, list[str]]:
    """The RDMA part of the step (pure): the opted-in nodes (``nodes.RDMA_FEATURE``) as the
    step reads them, and the ``docker create`` options a multi-node GPU task's container gets
    on such a node besides its verbs devices (the docker executor's RDMA_CAPS and
    RDMA_ULIMITS). Nothing for one node, a CPU task or a cluster with no such node."""
    if not rdma_nodes or not task.multinode_gpu:
        return "", []
    opts = [f"--cap-add={c}" for c in RDMA_CAPS]
    for name, soft, hard in RDMA_ULIMITS:
        opts += ["--ulimit", f"{name}={soft}:{hard}"]
    return ",".join(rdma_nodes), opts


def step_argv(
    task: Task, run_id: str, probe_tar: str | Path, rdma_nodes: tuple[str, ...] = ()
) -> list[str]:
    """The batch step's argv: ``bash -c STEP`` and its positional arguments."""
    backend = "cpu" if task.cpu_only else task.image.backend
    opts = create_options(task, run_id)
    rnodes, ropts = rdma_options(task, rdma_nodes)
    step = [
        "bash",
        "-c",
        STEP,
        "valorch-step",
        backend,
        str(probe_tar),
        "never" if task.image.local else "missing",
        str(len(opts)),
        *opts,
        rnodes,
        str(len(ropts)),
        *ropts,
        task.image.reference,
        *probe_command(*probe_args(task)),
    ]
    if not task.nodes:
        return step
    # one step, one task per node; each rank's stdout and log in its own file; the first
    # task to fail ends the others, and once one has ended the rest get GRACE_S
    return [
        "srun",
        f"--nodes={task.node_count}",
        "--ntasks-per-node=1",
        "--kill-on-bad-exit=1",
        f"--wait={GRACE_S:g}",
        "--output=valorch-%j-%t.stdout",
        "--error=slurm-%j-%t.err",
        f"--export=ALL,VALORCH_COLLECTIVE_TIMEOUT={collective_timeout(task):g}",
        *step,
    ]


# Runs on every node of a multi-node job once its step has ended, inside the allocation: a
# rank that srun killed (SIGKILL: no EXIT trap ran) leaves no container. Constant text.
SWEEP = (
    r"""ids=$(docker ps -aq --filter "label=$1"); [ -z "$ids" ] || docker rm -f $ids >/dev/null"""
)


def sweep_argv(task: Task, run_id: str) -> list[str]:
    """The batch script's last step for a multi-node task (none for one node): remove the
    run's containers on every node."""
    if not task.nodes:
        return []
    return [
        "srun",
        f"--nodes={task.node_count}",
        "--ntasks-per-node=1",
        "bash",
        "-c",
        SWEEP,
        "valorch-sweep",
        f"org.valorch.run={run_id}",
    ]


def write_probe(spool: Path) -> Path:
    """The probe archive in the spool (content-addressed, written once, atomically)."""
    data = probe_archive()
    path = spool / f"probe-{hashlib.sha256(data).hexdigest()[:16]}.tar"
    if not path.exists():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return path


class SlurmExecutor:
    name = "slurm"

    def __init__(
        self,
        cluster: SlurmCluster,
        spool: str | Path,
        labels: tuple[str, ...] = (),
        gpu_type: str | None = None,
        queue_timeout: float = QUEUE_TIMEOUT,
        poll: float = 0.5,
        rdma_nodes: tuple[str, ...] = (),
    ) -> None:
        self.cluster = cluster
        self.rdma_nodes = tuple(rdma_nodes)  # nodes.rdma_nodes: the feature rdma
        self.spool = Path(spool).resolve()
        self.labels = tuple(labels)
        self.gpu_type = gpu_type
        self.queue_timeout = queue_timeout
        self.poll = poll

    def execute(
        self,
        task: Task,
        run_id: str,
        on_result: Callable[[Any], None] | None = None,
        on_started: Callable[[], None] | None = None,
    ) -> Execution:
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        workdir = self.spool / run_id
        workdir.mkdir(parents=True, exist_ok=True)
        limit = overall_timeout(task) + SETUP_ALLOWANCE
        name = f"{task.image.alias}-{task.suite.name}"
        try:
            probe = write_probe(self.spool)
            job = self.cluster.submit(
                name,
                requirement(task, self.labels, self.gpu_type),
                step_argv(task, run_id, probe, self.rdma_nodes),
                workdir,
                limit,
                after=sweep_argv(task, run_id),
            )
        except SlurmUnmatched as exc:
            return job_failure(task, f"unmatched on Slurm: {exc}", timings, {})
        except (SlurmError, OSError) as exc:
            return job_failure(task, f"Slurm submission of {name} failed: {exc}", timings, {})
        timings["submit_s"] = time.perf_counter() - t0
        if on_started is not None:
            on_started()
        if task.nodes:
            return self._follow_gang(task, job, workdir, limit, timings, on_result, t0)
        transcript = Transcript(on_result=on_result)
        try:
            out = workdir / f"valorch-{job}.stdout"
            state = self._follow(job, limit, timings, [(out, transcript)])
        except SlurmError as exc:  # SlurmUnmatched too: pending for a reason that cannot go away
            prefix = "unmatched on Slurm" if isinstance(exc, SlurmUnmatched) else "Slurm"
            return job_failure(
                task, f"{prefix}: {exc}", timings, {"job_id": job, "workdir": str(workdir)}
            )
        timings["total_s"] = time.perf_counter() - t0
        log = read_log(workdir / f"slurm-{job}.out")
        info = {"job_id": job, "state": state, "workdir": str(workdir), **parse_job_log(log)}
        exit_code = exit_of(info)
        digest = digest_of(info.get("image"))
        tail = log[-8000:]
        if exit_code is None and state not in ("TIMEOUT", "DEADLINE"):
            what = info.get("failed") or f"ended {state} before the container ran"
            infra = f"Slurm job {job} on {info.get('node', '?')}: {what}: {last_lines(log)}"
            results = complete(vetted(transcript, task)[0], task.checks, "error", infra, tail)
            return Execution(
                results=tuple(results),
                meta={"slurm": info},
                timings=timings,
                image_digest=digest,
                infra_error=infra,
            )
        killed = (
            f"Slurm job {job} passed its time limit ({limit:g}s) and was killed"
            if state in ("TIMEOUT", "DEADLINE")
            else None
        )
        execution = conclude(
            transcript, task, exit_code=exit_code, killed=killed, log=tail, slurm=info
        )
        return execution.model_copy(update={"timings": timings, "image_digest": digest})

    def _follow(
        self, job: str, limit: float, timings: dict[str, float], outs: list[tuple[Path, Transcript]]
    ) -> str:
        """Follow the job to its end (the cluster's one polling loop), each output file read
        into its transcript as it grows, and to its end; interrupted or failed (SlurmError),
        it is cancelled."""
        offsets = [0] * len(outs)

        def tick(_state: str) -> None:
            for i, (path, transcript) in enumerate(outs):
                offsets[i] = feed(path, offsets[i], transcript)

        try:
            state = self.cluster.watch(
                job,
                queue_timeout=self.queue_timeout,
                run_timeout=limit + 120,
                poll=self.poll,
                on_tick=tick,
            )
        except (KeyboardInterrupt, SlurmError):
            with contextlib.suppress(SlurmError):
                self.cluster.cancel(job)
            raise
        tick(state)
        for _, transcript in outs:
            transcript.close()
        timings.update(self.cluster.timings)
        return state

    def _follow_gang(
        self,
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
            state = self._follow(job, limit, timings, outs)
        except SlurmError as exc:
            return job_failure(
                task, f"Slurm: {exc}", timings, {"job_id": job, "workdir": str(workdir)}
            )
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


def default_spool() -> Path:
    return Path.cwd() / "results" / "slurm"


# --- what a job leaves in its spool directory --------------------------------------------------
# Read for one node and a gang alike: its job log parsed, its files read as they grow, an
# infrastructure failure with the job's facts.


def parse_job_log(text: str) -> dict[str, Any]:
    """What the batch script and the step said on stderr (Slurm's job log)."""
    info: dict[str, Any] = {"container_env": {}}
    for line in text.splitlines():
        if m := re.match(r"^valorch: job (\S+) on (\S+) gpus=(\S*)", line):
            info.update(node=m.group(2), gpus=m.group(3))
        elif line.startswith("valorch-step: env ") and "=" in line:
            key, _, value = line[len("valorch-step: env ") :].partition("=")
            info["container_env"][key] = value
        elif m := re.match(r"^valorch-step: (container|image|exit) (\S+)", line):
            info[m.group(1)] = m.group(2)
        elif m := re.match(r"^valorch-step: ((create|copy)-failed)", line):
            info["failed"] = m.group(1)
    return info


def exit_of(info: dict[str, Any]) -> int | None:
    """The container's exit code the step logged, or None."""
    return int(info["exit"]) if str(info.get("exit", "")).lstrip("-").isdigit() else None


def feed(path: Path, offset: int, transcript: Transcript) -> int:
    try:
        with path.open("rb") as fh:
            fh.seek(offset)
            chunk = fh.read()
    except FileNotFoundError:
        return offset
    if chunk:
        transcript.feed(chunk)
    return offset + len(chunk)


def read_log(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def last_lines(text: str, n: int = 3) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[-n:])[-600:] or "no job log"


def digest_of(value: str | None) -> str | None:
    if not value:
        return None
    return value.split("@", 1)[1] if "@" in value else value


def job_failure(
    task: Task, message: str, timings: dict[str, float], slurm: dict[str, Any]
) -> Execution:
    return infrastructure_failure(task, message, timings=timings, meta={"slurm": slurm})


# --- a multi-node task ------------------------------------------------------------------------
# A multi-node task's Slurm job, followed to its end: one job (``--nodes=N
# --ntasks-per-node=1``) whose batch script finds the rendezvous (``GANG_PRELUDE``) and
# ``srun`` starts the step, hence the container, on every node. Each rank's probe output
# is ``valorch-<job>-<rank>.stdout`` and its step log ``slurm-<job>-<rank>.err``; the
# per-rank transcripts merge into one result per check (``executors.gang.merge``).
#
# ``srun --kill-on-bad-exit=1`` ends every rank when one fails, ``--wait`` the rest once
# one has ended; each step's EXIT trap removes its container; the job ends with them, so
# no Slurm job is left behind.


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
