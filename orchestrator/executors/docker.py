"""The docker executor: one container per (image, suite) task, on a local or
remote engine (the probe is mounted read-only from a volume filled once per engine and
probe version, ``probe_volume``; a shipped workload is copied in with ``put_archive``;
nothing is bind-mounted from this machine).

Security by default: no network unless the suite asks for it, no privileged
mode, no new privileges, bounded pids, and exactly the devices the backend
needs. The container is always removed, also on Ctrl-C.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import docker
import docker.errors
import docker.tls
import docker.types
from requests.exceptions import ConnectionError as RequestsConnectionError

from ..errors import InfrastructureError
from ..imageref import identity
from ..spec import CheckResult, Execution, HostSpec, Task
from ..words import cut
from . import cleanup, gang, owner, probe_volume
from .base import LABEL, overall_timeout, workload_archives
from .container import PROBE_ROOT, ContainerRun, ContainerSpec, Limits, task_container, tmpfs_for
from .limits import limits_for
from .pull import runnable
from .sdk import ssh_transport
from .transcript import (
    Transcript,
    conclude,
    infrastructure_failure,
    not_run,
    rerun_task,
    with_rerun,
)

if TYPE_CHECKING:
    from docker.api.client import APIClient
    from docker.models.containers import Container

TAIL = 8_000


def connect(host: HostSpec, timeout: float = 60) -> docker.DockerClient:
    """A client for the host's engine, or an InfrastructureError saying what to do."""
    try:
        client = docker.DockerClient(**client_kwargs(host, timeout))
        client.ping()
        return client
    except (docker.errors.DockerException, RequestsConnectionError, OSError) as exc:
        raise InfrastructureError(
            f"Docker engine at {host.endpoint} does not answer ({cut(str(exc), 500)})",
            "start dockerd (scripts/ensure-engine.sh does), or use --image host to run on the local "
            "interpreter without a container",
        ) from None


def client_kwargs(host: HostSpec, timeout: float = 60) -> dict[str, Any]:
    """``DockerClient`` arguments for a host's endpoint: ``unix://``, ``tcp://`` with the
    host's TLS client certificates, or ``ssh://user@host`` through the ``ssh`` client
    (no paramiko needed; keys and known_hosts come from ~/.ssh as for ``docker -H ssh://``)."""
    kw: dict[str, Any] = {"base_url": host.endpoint, "timeout": timeout}
    if host.endpoint.startswith("ssh://"):
        ssh_transport()
        kw["use_ssh_client"] = True
    elif host.tls is not None:
        kw["tls"] = _EngineTLS(
            client_cert=(host.tls.cert, host.tls.key), ca_cert=host.tls.ca, verify=host.tls.verify
        )
    return kw


class _EngineTLS(docker.tls.TLSConfig):
    """TLS to one engine with its own CA. requests lets REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE
    replace a session's CA file (psf/requests#3829), so the environment is not consulted
    for this client (which also means no proxy from the environment for TLS engines)."""

    def configure_client(self, client: APIClient) -> None:
        super().configure_client(client)
        client.trust_env = False


def create_kwargs(spec: ContainerSpec) -> dict[str, Any]:
    kw: dict[str, Any] = {
        "command": list(spec.command),
        "working_dir": spec.workdir,
        "environment": dict(spec.env),
        "labels": dict(spec.labels),
        "network_mode": "bridge" if spec.network else "none",
        "privileged": False,
        "security_opt": list(spec.security_opt),
        "pids_limit": spec.pids_limit,
        "cap_drop": list(spec.cap_drop),
        "cap_add": list(spec.cap_add),
        "read_only": spec.read_only,
        "tmpfs": dict(spec.tmpfs),
        # the probe's working directory, where a shipped workload is copied before the start
        # (put_archive): an anonymous volume, since a read-only root file system takes no
        # archive; the probe itself is mounted beneath it, read-only (with_probe)
        "mounts": [docker.types.Mount(target=PROBE_ROOT, source=None, type="volume")],
        "detach": True,
    }
    if spec.limits.memory:  # the same as swap: no swapping past the limit, the OOM killer instead
        kw["mem_limit"] = kw["memswap_limit"] = spec.limits.memory
    if spec.limits.cpus:
        kw["nano_cpus"] = int(spec.limits.cpus * 1e9)
    if spec.user:
        kw["user"] = spec.user
    if spec.devices:
        kw["devices"] = list(spec.devices)
    if spec.group_add:
        kw["group_add"] = list(spec.group_add)
    if spec.shm_size:
        kw["shm_size"] = spec.shm_size
    if spec.ulimits:
        kw["ulimits"] = [docker.types.Ulimit(name=n, soft=a, hard=b) for n, a, b in spec.ulimits]
    if spec.gpu_ids is not None:
        kw["device_requests"] = [
            docker.types.DeviceRequest(device_ids=list(spec.gpu_ids), capabilities=[["gpu"]])
        ]
    return kw


def container_options(
    task: Task,
    run_id: str,
    limits: Limits = Limits(),  # noqa: B008  # frozen: one shared default is safe
) -> dict[str, Any]:
    """Everything ``containers.create`` gets for a suite task, apart from the image (pure)."""
    return create_kwargs(task_container(task, run_id, limits))


_ENGINE_TOTALS: dict[str, tuple[int | None, int | None]] = {}


def engine_totals(client: docker.DockerClient, endpoint: str) -> tuple[int | None, int | None]:
    """(memory bytes, CPUs) the engine reports, once per endpoint; (None, None) when it does not say."""
    if endpoint not in _ENGINE_TOTALS:
        try:
            info = client.info()
            _ENGINE_TOTALS[endpoint] = (info.get("MemTotal") or None, info.get("NCPU") or None)
        except (docker.errors.DockerException, RequestsConnectionError):
            return None, None
    return _ENGINE_TOTALS[endpoint]


class DockerExecutor:
    name = "docker"

    def __init__(self, host: HostSpec, client: docker.DockerClient | None = None) -> None:
        self.host = host
        self._client = client
        self._flight = InFlight()
        self._peers: list[DockerExecutor] = []  # the other nodes' executors of a multi-node task

    def cancel(self) -> None:
        """Stop this executor's container now (Ctrl-C, SIGTERM): it is killed and removed
        from another thread; a container created after this is removed at once. A
        multi-node task's containers on every node go too."""
        self._flight.cancel()
        for peer in list(self._peers):
            peer.cancel()

    @property
    def client(self) -> docker.DockerClient:
        if self._client is None:
            self._client = connect(self.host)
        return self._client

    def image_names(self, reference: str) -> tuple[str | None, str | None, str | None]:
        """(digest, id, error) of an image present on the engine, from one inspection: its
        digest as ``imageref.identity`` names it, and its id (the content digest of its
        config), which is the same whether the engine pulled the image or loaded it."""
        try:
            image = self.client.images.get(reference)
        except docker.errors.ImageNotFound:
            return (
                None,
                None,
                (
                    f"image {reference} is not present on {self.host.name}; valorch images pull it there "
                    "or run with --pull missing (make test-images builds the local test images)"
                ),
            )
        except docker.errors.APIError as exc:
            return None, None, f"engine error inspecting {reference}: {exc.explanation}"
        digest = identity(reference, image.attrs.get("RepoDigests") or [], image.id or "")
        return digest, image.id or None, None

    def execute(
        self,
        task: Task,
        run_id: str,
        on_result: Callable[[CheckResult], None] | None = None,
        on_started: Callable[[], None] | None = None,
        rerun: bool = True,
    ) -> Execution:
        if task.nodes:  # a multi-node task: one container per node, each on its host's engine
            self._peers = [DockerExecutor(h) for h in task.nodes[1:]]
            peers = [self, *self._peers]
            return execute_gang(task, run_id, peers, on_result, on_started)
        t0 = time.perf_counter()
        reference = runnable(task.image)  # a known digest runs as repo@sha256:…, never the tag
        digest, image_id, problem = self.image_names(reference)
        if problem:
            return infrastructure_failure(task, problem, image_digest=digest)
        transcript = Transcript(on_result=on_result)
        try:
            ran, limits = self.run(
                task, run_id, workload_archives(task), transcript.feed, on_started
            )
        except (docker.errors.DockerException, RequestsConnectionError) as exc:
            message = f"engine error running {reference}: {str(exc)[:500]}"
            return infrastructure_failure(task, message, image_digest=digest)
        transcript.close()
        timings = {**ran.timings, "total_s": time.perf_counter() - t0, **transcript.breakdown()}
        killed = (
            f"the container passed its deadline of {overall_timeout(task):g}s and was killed"
            if ran.killed
            else None
        )
        execution = conclude(
            transcript,
            task,
            exit_code=ran.exit_code,
            killed=killed,
            log=ran.stderr_tail,
            cause=oom_cause(limits) if ran.oom_killed and not ran.killed else None,
        )
        execution = execution.model_copy(
            update={"timings": timings, "image_digest": digest, "image_id": image_id}
        )
        again = not_run(execution) if rerun else []
        if again:  # the probe died under one check: the checks after it run once more, in a fresh container
            execution = with_rerun(
                execution, self.execute(rerun_task(task, again), run_id, on_result, rerun=False)
            )
        return execution

    def run(
        self,
        task: Task,
        run_id: str,
        archives: list[bytes],
        on_stdout: Callable[[bytes], None],
        on_started: Callable[[], None] | None,
        rank_env: dict[str, str] | None = None,
    ) -> tuple[ContainerRun, Limits]:
        """``task``'s container on this engine, sized for it, with the probe's volume there
        (``rank_env``: one node of a multi-node task), run to its end; and its limits."""
        limits = limits_for(task, *engine_totals(self.client, self.host.endpoint))
        options = container_options(task, run_id, limits)
        if rank_env is not None:  # the ranks meet at the hosts' addresses
            options["network_mode"] = "host"
            options["environment"] = {**options["environment"], **rank_env}
            options["labels"] = {**options["labels"], "org.valorch.node_rank": rank_env["RANK"]}
        image = runnable(task.image)
        options = with_probe(options, self.client, image)
        deadline = overall_timeout(task)
        ran = run_container(
            self.client, image, options, archives, deadline, on_stdout, self._flight, on_started
        )
        return ran, limits


def with_probe(options: dict[str, Any], client: docker.DockerClient, image: str) -> dict[str, Any]:
    """Container options plus the probe, mounted read-only from its volume on ``client``'s
    engine (published there first if need be, through ``image``: ``probe_volume.mount``)."""
    return {**options, "mounts": [*options["mounts"], probe_volume.mount(client, image)]}


def oom_cause(limits: Limits) -> str:
    """What killed a probe whose container met its memory limit, naming the /tmp tmpfs
    (its pages count against the limit and outlive the process that wrote them)."""
    size = tmpfs_for(limits)["/tmp"].rsplit("size=", 1)[1]
    size = f"{int(size) >> 20} MiB" if size.isdigit() else size
    limit = f"{limits.memory >> 20} MiB" if limits.memory else "the host's memory"
    return (
        f"the out-of-memory killer at the container's memory limit ({limit}); files written to /tmp "
        f"(a tmpfs of up to {size}) count against that limit and stay after their writer exits"
    )


class Cancelled(docker.errors.DockerException):
    """The run was cancelled (Ctrl-C, SIGTERM) while its container was being set up."""


class InFlight:
    """The container of one executor's task, for ``cancel`` from another thread: the dispatcher's
    main thread, where Ctrl-C and SIGTERM arrive, while the container runs in a worker thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self.container: Container | None = None

    def adopt(self, container: Container) -> None:
        """Record a created container; one created after ``cancel`` is removed at once."""
        with self._lock:
            self.container = container
            cancelled = self._cancelled
        if cancelled:
            _remove(container)
            raise Cancelled("cancelled: the container was removed as soon as it was created")

    def check(self) -> None:
        if self._cancelled:
            raise Cancelled("cancelled before the container started")

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            container = self.container
        if container is not None:
            _remove(container)


def _remove(container: Container) -> None:
    with contextlib.suppress(docker.errors.DockerException, RequestsConnectionError):
        container.remove(force=True, v=True)  # v: its anonymous volume (a shipped workload) too


def run_container(
    client: docker.DockerClient,
    image: str,
    options: dict[str, Any],
    archives: list[bytes],
    deadline: float,
    on_stdout: Callable[[bytes], None],
    flight: InFlight | None = None,
    on_started: Callable[[], None] | None = None,
) -> ContainerRun:
    """The one container lifecycle: create, copy the archives into PROBE_ROOT, attach, start,
    stream stdout, kill at the deadline, and always remove the container, also on Ctrl-C and
    SIGTERM (``flight.cancel`` from the dispatcher's thread). Engine errors propagate.

    A container that ran to its end and was inspected is removed in the background
    (``cleanup.later``): its results are stored and reported meanwhile, and the command
    waits for the removal before it ends (``cleanup.settle``). On any other way out
    (an engine error, Ctrl-C, SIGTERM) it is removed here, before this raises."""
    timings: dict[str, float] = {}
    killed = threading.Event()
    stderr_tail = b""
    container = None
    ended = False
    flight = flight or InFlight()
    try:
        t = time.perf_counter()
        flight.check()
        container = client.containers.create(image, **options)
        flight.adopt(container)
        for archive in archives:  # into PROBE_ROOT, a volume (the root fs is read-only)
            container.put_archive(PROBE_ROOT, archive)
        timings["create_s"] = time.perf_counter() - t
        timer = threading.Timer(deadline, _kill, (container, killed))
        timer.daemon = True
        t = time.perf_counter()
        stream = container.attach(stdout=True, stderr=True, stream=True, logs=True, demux=True)
        flight.check()
        container.start()
        timings["start_s"] = time.perf_counter() - t
        timer.start()
        if on_started is not None:
            on_started()
        try:
            for out, err in stream:
                if out:
                    on_stdout(out)
                if err:
                    stderr_tail = (stderr_tail + err)[-TAIL:]
            status = container.wait(timeout=60)
        finally:
            timer.cancel()
        timings["run_s"] = time.perf_counter() - t
        container.reload()
        ran = ContainerRun(
            int(status.get("StatusCode", -1)),
            stderr_tail.decode("utf-8", "replace"),
            killed.is_set(),
            timings,
            bool(container.attrs.get("State", {}).get("OOMKilled")),
        )
        ended = True
        return ran
    finally:
        if container is not None:
            if ended:
                cleanup.later(_remove, container)
            else:
                _remove(container)


def _kill(container: Container, killed: threading.Event) -> None:
    killed.set()
    with contextlib.suppress(docker.errors.DockerException):
        container.kill()


def reap_known(host: HostSpec, known: set[str]) -> int:
    """Remove the leftover containers on ``host`` whose run is in ``known``, and those whose
    valorch was killed (``owner.orphaned``); an engine that does not answer is skipped (it
    is reported when a task goes there)."""
    try:
        client = connect(host, timeout=10)
    except InfrastructureError:
        return 0
    removed = 0
    # sparse: the listing's own labels, not one inspect request per valorch container on the engine
    for c in client.containers.list(all=True, sparse=True, filters={"label": f"{LABEL}.run"}):
        labels = c.attrs.get("Labels") or {}
        if labels.get(f"{LABEL}.run") in known or owner.orphaned(labels.get(f"{LABEL}.owner")):
            _remove(c)  # this container; the listing has every other one of its run
            removed += 1
    return removed


# --- a multi-node task --------------------------------------------------------------------------
#
# A multi-node task on Docker hosts: one container per node, each on its host's engine,
# with host networking for the collective (as multi-node launchers do: the ranks reach
# each other at the hosts' addresses) and the rendezvous variables of its rank. Node 0's
# address and a port checked free there are the rendezvous.
#
# The containers start together and end together: when one node's probe dies (exit code
# not 0, or gone) the others get ``GRACE_S`` to finish, then every container is removed;
# when all but one have ended, the last gets the same grace before it counts as hung. At
# the task's deadline every container is killed. Every container is always removed.


class Node:
    """One node's container: its engine (its host's ``DockerExecutor``), transcript and how
    it ended."""

    def __init__(self, rank: int, task: Task, executor: DockerExecutor) -> None:
        gpus = task.node_gpus[rank] if task.node_gpus and rank < len(task.node_gpus) else None
        # the task as this node runs it: its host and its GPUs
        self.task = task.model_copy(update={"host": task.nodes[rank], "gpus": gpus or None})
        self.rank, self.executor = rank, executor
        self.transcript = Transcript()
        self.ran: ContainerRun | None = None
        self.error: str | None = None
        self.digest: str | None = None
        self.image_id: str | None = None
        self.ended = threading.Event()
        self.stopped_by_us = False

    @property
    def failed(self) -> bool:
        return self.error is not None or (
            self.ran is not None and self.ran.exit_code != 0 and not self.stopped_by_us
        )


def execute_gang(
    task: Task,
    run_id: str,
    executors: list[DockerExecutor],
    on_result: Callable[[CheckResult], None] | None,
    on_started: Callable[[], None] | None,
) -> Execution:
    """Run ``task`` on its nodes (``executors[r]`` is node r's DockerExecutor)."""
    t0 = time.perf_counter()
    reference = runnable(task.image)
    nodes = [Node(r, task, ex) for r, ex in enumerate(executors)]
    for n in nodes:
        n.digest, n.image_id, problem = n.executor.image_names(reference)
        if problem:
            return infrastructure_failure(
                task, f"node {n.task.host.name} (rank {n.rank}): {problem}"
            )
    try:
        port = gang.choose_port(task.nodes[0].net_address)
    except Exception as exc:  # noqa: BLE001 - an InfrastructureError: every check is error
        return infrastructure_failure(task, str(exc))
    nodes[0].transcript.on_result = on_result
    archives = workload_archives(task)
    started = threading.Barrier(len(nodes), action=on_started) if on_started else None

    def one(n: Node) -> None:
        try:
            env = gang.rank_env(task, n.rank, port, n.digest, n.image_id)
            arrive = functools.partial(_arrive, started)
            n.ran, _ = n.executor.run(n.task, run_id, archives, n.transcript.feed, arrive, env)
        except (docker.errors.DockerException, RequestsConnectionError) as exc:
            if not n.stopped_by_us:  # removed by us: not the node's fault
                n.error = f"engine error on {n.task.host.name}: {str(exc)[:300]}"
            _arrive(started, broken=True)
        except Exception as exc:  # noqa: BLE001 - a harness failure on one node is that node's fault
            n.error = f"{type(exc).__name__}: {str(exc)[:300]}"
            _arrive(started, broken=True)
        finally:
            n.ended.set()

    threads = [
        threading.Thread(target=one, args=(n,), name=f"valorch-node{n.rank}", daemon=True)
        for n in nodes
    ]
    for t in threads:
        t.start()
    hung = _watch(nodes)
    for t in threads:
        t.join()
    at_deadline = [
        (n.rank, len(n.transcript.results)) for n in nodes if n.ran is not None and n.ran.killed
    ]
    # of those killed at the deadline: the ones the others waited for
    hung |= gang.hung_nodes(at_deadline)
    for n in nodes:
        n.transcript.close()
    runs = [_node_run(n, hung) for n in nodes]
    execution = gang.merge(task, runs)
    timings = {
        **execution.timings,
        "total_s": time.perf_counter() - t0,
        **nodes[0].transcript.breakdown(),
    }
    return execution.model_copy(update={"timings": timings})


def _arrive(barrier: threading.Barrier | None, broken: bool = False) -> None:
    """Every node's container started (``on_started`` once), or one never will."""
    if barrier is None:
        return
    try:
        if broken:
            barrier.abort()
        else:
            barrier.wait(timeout=120)
    except threading.BrokenBarrierError:
        pass


def _watch(nodes: list[Node]) -> set[int]:
    """Wait for the nodes; a node that failed, or the last one still running once all others ended,
    starts the grace; after it, the ones still running are removed. The ranks removed as hung."""
    hung: set[int] = set()
    since: float | None = None
    while not all(n.ended.is_set() for n in nodes):
        time.sleep(0.2)
        running = [n for n in nodes if not n.ended.is_set()]
        if since is None and (
            any(n.failed for n in nodes if n.ended.is_set())
            or (len(nodes) > 1 and len(running) == 1)
        ):
            since = time.monotonic()
        if since is not None and time.monotonic() - since > gang.GRACE_S:
            if not any(n.failed for n in nodes if n.ended.is_set()):
                # the others ended well: these stopped answering
                hung.update(n.rank for n in running)
            for n in running:
                n.stopped_by_us = True
                n.executor.cancel()
            for n in running:
                n.ended.wait(60)
    return hung


def _node_run(n: Node, hung: set[int]) -> gang.NodeRun:
    host = n.task.host
    fault: str | None = None
    why = ""
    if n.ran is None:  # never ran (engine error) or removed before it ended
        why = n.error or "its container was removed"
        if n.error:
            fault, execution = "died", infrastructure_failure(n.task, why)
        else:
            fault = "hung" if n.rank in hung else None
            stopped = f"node {host.name} was stopped: {why}"
            execution = conclude(n.transcript, n.task, exit_code=None, killed=stopped)
    else:
        killed = "the task passed its deadline and was killed" if n.ran.killed else None
        if n.stopped_by_us and not killed:
            killed = "stopped: another node of the task had ended"
        execution = conclude(
            n.transcript, n.task, exit_code=n.ran.exit_code, killed=killed, log=n.ran.stderr_tail
        ).model_copy(update={"timings": n.ran.timings})
        if n.rank in hung:
            fault, why = (
                "hung",
                (
                    "killed at the task's deadline, behind the other nodes"
                    if n.ran.killed
                    else f"still running {gang.GRACE_S:g}s after the other nodes had ended"
                ),
            )
        elif n.ran.exit_code != 0 and not n.stopped_by_us:
            fault, why = "died", f"its container exited with code {n.ran.exit_code}"
    gpus = tuple(g.index for g in (n.task.gpus or ()))
    return gang.NodeRun(n.rank, host, execution, fault, why, n.digest, gpus)
