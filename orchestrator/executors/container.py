"""What every probe container gets, once (pure): ``ContainerSpec``.

The docker executor turns it into ``containers.create`` arguments, the Slurm step into
``docker create`` flags, the Kubernetes Job into its container's env and security
context, and the host executor takes only the environment. One place decides the
security defaults: no network unless the suite asks for it, no privileges, no new
privileges, every capability dropped but the few the probe proves it needs, bounded
pids, memory and CPUs (``executors/limits.py``), a read-only root file system with a
tmpfs for /tmp, exactly the devices the backend needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ..spec import GPU, HostSpec, Task
from . import hostenv, owner
from .base import LABEL, PROBE_PACKAGE, probe_args
from .devices import device_options

PROBE_ROOT = "/opt/valorch"
#: the probe's interpreter settings: no .pyc files written into the image, unbuffered
#: output so that results stream as they happen
PROBE_ENV: Mapping[str, str] = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}


def probe_env(root: str = PROBE_ROOT) -> dict[str, str]:
    """The probe's environment inside a container (the probe package lives under ``root``)."""
    return {"PYTHONPATH": root, **PROBE_ENV}


def local_env(root: str, passed: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment of a probe run by the local interpreter: the allow-list of this
    process's (``hostenv.allowed``: no token, password or database URL) plus the names a
    job passes, never a PYTHON* setting that could change what the probe imports."""
    env = {k: v for k, v in hostenv.allowed(passed=passed).items() if not k.startswith("PYTHON")}
    env.update(probe_env(root))
    return env


#: Every capability is dropped (``cap_drop=ALL``); these are added back, each because a
#: suite proved it needs it (tests/integration/test_lockdown_docker.py runs the suites).
PROBE_CAPS: tuple[str, ...] = (
    # probe/sandbox.py: declared workloads (command, pytest) run as uid/gid 65534, not as
    # the probe's root; setgroups/setgid/setuid in the forked child need these two.
    "SETUID",
    "SETGID",
    # probe/sandbox.private_dir: a workload's HOME/TMPDIR (and a pytest workload's JUnit
    # file) is a fresh directory the workload user owns; chown needs CAP_CHOWN (without
    # it the directory is world-writable and sticky instead).
    "CHOWN",
)
#: Added to the profiler suite's GPU containers only, and only when asked (``valorch run
#: --profiling-caps`` or ``profiling_caps: true`` on a job's profiler suite): Nsight Compute
#: reads the GPU performance counters only as an admin where the driver restricts them
#: (ERR_NVGPUCTRPERM; NVIDIA's page for it: "the container must be started with ... --cap-add=
#: SYS_ADMIN"). The cost (docs/architecture.md, "Profiling capabilities"): CAP_SYS_ADMIN lets the
#: probe's root and the image's code mount, use namespaces and much of what root may do.
PROFILING_CAPS: tuple[str, ...] = ("SYS_ADMIN",)
#: Added to a multi-node GPU task's containers on a host that lists RDMA devices (the hosts
#: file's ``rdma``, opt-in per host; the Slurm step on a node with the feature ``rdma`` and the
#: Kubernetes Job under ``--rdma-resource`` take the same values): NCCL/RCCL's InfiniBand/RoCE
#: transport registers (pins) its buffers, which needs CAP_IPC_LOCK and a memlock limit above
#: the default 64 KiB.
#: The cost (docs/architecture.md, "RDMA for multi-node GPU tasks"): the container may lock
#: host memory without bound and talks to the NIC's verbs device directly.
RDMA_CAPS: tuple[str, ...] = ("IPC_LOCK",)
RDMA_ULIMITS: tuple[tuple[str, int, int], ...] = (("memlock", -1, -1),)
#: The probe's user when its task declares no workload (nobody/nogroup): with no workload to
#: keep apart from it, the probe needs neither root nor any capability. CPU tasks only: a GPU
#: task keeps uid 0 (without capabilities), since AMD's /dev/kfd and /dev/dri nodes are
#: open to root and the render/video groups, whose ids differ from host to host.
UNPRIVILEGED = "65534:65534"
#: The container's root file system is read-only; the probe writes only here (its
#: temporary files, the workloads' HOME/TMPDIR): a tmpfs of this size.
TMPFS = {"/tmp": "rw,nosuid,nodev,size=1g", "/var/tmp": "rw,nosuid,nodev,size=64m"}
#: A GPU task's home and the caches its GPU libraries write, on the /tmp tmpfs (the root file
#: system is read-only; HOME=/root there made MIOpen fail with "SQLite database: disk I/O error",
#: ROCm/tensorflow-upstream#1419). Each name as its library reads it (docs/architecture.md,
#: "GPU tasks' writable state", cites each). /tmp is not noexec: Triton and MIOpen load the
#: code objects they cache there. The probe creates the directories (probe/sandbox.py), and
#: gives each declared workload its own copies under its private home.
GPU_CACHE_ENV: Mapping[str, str] = {
    "HOME": "/tmp",
    "XDG_CACHE_HOME": "/tmp/.cache",  # torch extensions, AMD comgr's cache ($XDG_CACHE_HOME/comgr_cache)
    "MIOPEN_USER_DB_PATH": "/tmp/.config/miopen",  # MIOpen's user performance/find databases
    "MIOPEN_CUSTOM_CACHE_DIR": "/tmp/.cache/miopen",  # MIOpen's compiled-kernel cache
    "TRITON_CACHE_DIR": "/tmp/.triton/cache",  # Triton's compiled kernels
    "TORCHINDUCTOR_CACHE_DIR": "/tmp/torchinductor_cache",  # inductor's generated code
    "CUDA_CACHE_PATH": "/tmp/.nv/ComputeCache",  # the CUDA driver's PTX JIT cache
}


def writable_root(backend: str) -> bool:
    """Whether a GPU task of ``backend`` gets a writable root file system (its container's own
    layer, discarded with the container). ROCm: yes. MIOpen's shipped system databases
    (``/opt/rocm/share/miopen/db/*.kdb``) are SQLite files, some in WAL journal mode, which
    SQLite can open only with write access beside them ("unable to open database file":
    pytorch/pytorch#126942 changed the kdbs' journal mode in PyTorch's ROCm CI images for it).
    A tmpfs over that directory would hide the databases, and a copy costs gigabytes. The cost
    is documented in docs/architecture.md (security): the probe's root (no capabilities) and
    the image's libraries can change the container's files for that task; workloads (uid
    65534) still cannot write root-owned files; nothing outlives the container."""
    return backend == "rocm"


#: Under a memory limit the tmpfs is a quarter of it (/var/tmp a sixteenth): tmpfs pages
#: count against the container's memory and stay after their writer exits, so a workload
#: that fills /tmp must meet "no space left" (its own failure), not the OOM killer of the
#: whole probe (docs/architecture.md, "Containers locked down").
TMPFS_SHARE = {"/tmp": 4, "/var/tmp": 16}


def tmpfs_for(limits: Limits) -> dict[str, str]:
    """The tmpfs mounts of a container with these limits (each at most its TMPFS size)."""
    if not limits.memory:
        return dict(TMPFS)
    caps = {"/tmp": 1 << 30, "/var/tmp": 64 << 20}
    return {
        path: f"rw,nosuid,nodev,size={max(1 << 20, min(caps[path], limits.memory // TMPFS_SHARE[path]))}"
        for path in TMPFS
    }


@dataclass(frozen=True)
class Limits:
    """A container's memory (bytes) and CPUs; None: no limit of that kind."""

    memory: int | None = None
    cpus: float | None = None


@dataclass(frozen=True)
class ContainerSpec:
    command: tuple[str, ...]
    labels: Mapping[str, str]
    env: Mapping[str, str] = field(default_factory=probe_env)
    workdir: str = PROBE_ROOT
    network: bool = False
    devices: tuple[str, ...] = ()  # host:container:perms
    group_add: tuple[str, ...] = ()
    security_opt: tuple[str, ...] = ("no-new-privileges",)
    shm_size: str | None = None
    gpu_ids: tuple[str, ...] | None = None  # CUDA: device request ids (None: no GPU request)
    pids_limit: int = 4096
    cap_drop: tuple[str, ...] = ("ALL",)
    cap_add: tuple[str, ...] = PROBE_CAPS
    limits: Limits = Limits()
    read_only: bool = True
    tmpfs: Mapping[str, str] = field(default_factory=lambda: dict(TMPFS))
    user: str | None = None  # None: the image's (root in the images valorch validates)
    ulimits: tuple[tuple[str, int, int], ...] = ()  # (name, soft, hard); -1: unlimited

    def with_devices(
        self, backend: str, host: HostSpec, gpus: tuple[GPU, ...] | None
    ) -> ContainerSpec:
        dev = device_options(backend, host, gpus)
        security_opt = self.security_opt + dev.pop("security_opt", ())
        return replace(self, **dev, security_opt=security_opt)

    def docker_flags(self) -> list[str]:
        """The same as ``docker create`` flags (the Slurm step adds devices on the node)."""
        flags = ["--network", "bridge" if self.network else "none"]
        for key, value in self.labels.items():
            flags += ["--label", f"{key}={value}"]
        for opt in self.security_opt:
            flags += ["--security-opt", opt]
        flags += ["--pids-limit", str(self.pids_limit), "--workdir", self.workdir]
        if self.user:
            flags += ["--user", self.user]
        flags += [f"--cap-drop={c}" for c in self.cap_drop] + [
            f"--cap-add={c}" for c in self.cap_add
        ]
        if self.limits.memory:
            flags += ["--memory", str(self.limits.memory), "--memory-swap", str(self.limits.memory)]
        if self.limits.cpus:
            flags += ["--cpus", f"{self.limits.cpus:g}"]
        # no --read-only here: the Slurm step copies the probe into /opt with `docker cp`
        for key, value in self.env.items():
            flags += ["-e", f"{key}={value}"]
        if self.shm_size:
            flags += ["--shm-size", self.shm_size]
        for name, soft, hard in self.ulimits:
            flags += ["--ulimit", f"{name}={soft}:{hard}"]
        return flags


def labels_for(run_id: str, suite: str, image: str) -> dict[str, str]:
    labels = {LABEL: "1", f"{LABEL}.run": run_id, f"{LABEL}.suite": suite, f"{LABEL}.image": image}
    me = owner.me()  # the valorch process that started it (executors/owner.py: orphans)
    if me:
        labels[f"{LABEL}.owner"] = me
    return labels


def probe_command(*args: str) -> tuple[str, ...]:
    return ("python3", "-m", PROBE_PACKAGE, *args)


def task_container(
    task: Task, run_id: str, limits: Limits = Limits(), devices: bool = True
) -> ContainerSpec:
    """The container of one suite task; the GPU devices of its backend unless ``--cpu-only``
    (``devices=False``: everything but the devices, which the Slurm step adds on its node)."""
    spec = ContainerSpec(
        command=probe_command(*probe_args(task)),
        labels=labels_for(run_id, task.suite.name, task.image.alias),
        network=task.suite.network,
        limits=limits,
        tmpfs=tmpfs_for(limits),
    )
    workloads = bool(task.suite.commands or task.suite.pytest)
    if not workloads:  # nothing to run as another uid: no capability is needed
        spec = replace(spec, cap_add=())
    if task.cpu_only or task.image.backend == "cpu":
        if not workloads:
            spec = replace(
                spec, user=UNPRIVILEGED, env={**spec.env, "HOME": "/tmp", "USER": "nobody"}
            )
        return spec
    backend = str(task.image.backend)
    spec = replace(spec, env={**spec.env, **GPU_CACHE_ENV}, read_only=not writable_root(backend))
    # opt-in, the profiler suite only (spec.SuiteRef refuses it elsewhere)
    if task.suite.profiling_caps:
        spec = replace(spec, cap_add=spec.cap_add + PROFILING_CAPS)
    spec = spec.with_devices(backend, task.host, task.gpus) if devices else spec
    if task.suite.nodes > 1 and task.host.rdma:  # opt-in per host: RDMA for NCCL/RCCL
        spec = replace(
            spec,
            devices=spec.devices + tuple(f"{d}:{d}:rwm" for d in task.host.rdma),
            cap_add=spec.cap_add + RDMA_CAPS,
            ulimits=RDMA_ULIMITS,
        )
    return spec


@dataclass(frozen=True)
class ContainerRun:
    """How one probe container ended (the docker executor's ``run_container``)."""

    exit_code: int
    stderr_tail: str
    killed: bool
    timings: dict[str, float]
    oom_killed: bool = False  # the engine's State.OOMKilled
