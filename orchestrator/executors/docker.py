"""The docker executor: one container per (image, suite) task, on a local or
remote engine (the probe is copied in with ``put_archive``, never bind-mounted).

Security by default: no network unless the suite asks for it, no privileged
mode, no new privileges, bounded pids, and exactly the devices the backend
needs. The container is always removed, also on Ctrl-C.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

import docker
import docker.errors
import docker.tls
from requests.exceptions import ConnectionError as RequestsConnectionError

from ..errors import InfrastructureError
from ..protocol import Transcript, conclude, infrastructure_failure
from ..spec import Execution, HostSpec, Task
from .base import LABEL, PROBE_PACKAGE, overall_timeout, probe_archive, probe_args, workload_archive
from .devices import device_options

TAIL = 8_000


def connect(host: HostSpec, timeout: float = 60) -> docker.DockerClient:
    """A client for the host's engine, or an InfrastructureError saying what to do."""
    try:
        client = docker.DockerClient(**client_kwargs(host, timeout))
        client.ping()
        return client
    except (docker.errors.DockerException, RequestsConnectionError, OSError) as exc:
        raise InfrastructureError(
            f"Docker engine at {host.endpoint} does not answer ({str(exc)[:200]})",
            "start dockerd (scripts/ensure-engine.sh does), or use --image host to run on the local "
            "interpreter without a container") from None


def client_kwargs(host: HostSpec, timeout: float = 60) -> dict[str, Any]:
    """``DockerClient`` arguments for a host's endpoint: ``unix://``, ``tcp://`` with the
    host's TLS client certificates, or ``ssh://user@host`` through the ``ssh`` client
    (no paramiko needed; keys and known_hosts come from ~/.ssh as for ``docker -H ssh://``)."""
    kw: dict[str, Any] = {"base_url": host.endpoint, "timeout": timeout}
    if host.endpoint.startswith("ssh://"):
        kw["use_ssh_client"] = True
    elif host.tls is not None:
        kw["tls"] = _EngineTLS(client_cert=(host.tls.cert, host.tls.key), ca_cert=host.tls.ca,
                               verify=host.tls.verify)
    return kw


class _EngineTLS(docker.tls.TLSConfig):
    """TLS to one engine with its own CA. requests lets REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE
    replace a session's CA file (psf/requests#3829), so the environment is not consulted
    for this client (which also means no proxy from the environment for TLS engines)."""

    def configure_client(self, client: Any) -> None:
        super().configure_client(client)
        client.trust_env = False


def container_options(task: Task, run_id: str) -> dict[str, Any]:
    """Everything ``containers.create`` gets, apart from the image (pure)."""
    opts: dict[str, Any] = {
        "command": ["python3", "-m", PROBE_PACKAGE, *probe_args(task)],
        "working_dir": "/opt/valorch",
        "environment": {"PYTHONPATH": "/opt/valorch", "PYTHONDONTWRITEBYTECODE": "1",
                        "PYTHONUNBUFFERED": "1"},
        "labels": {LABEL: "1", f"{LABEL}.run": run_id, f"{LABEL}.suite": task.suite.name,
                   f"{LABEL}.image": task.image.alias},
        "network_mode": "bridge" if task.suite.network else "none",
        "privileged": False,
        "security_opt": ["no-new-privileges"],
        "pids_limit": 4096,
        "detach": True,
    }
    if not task.cpu_only:
        dev = device_options(task.image.backend, task.host, task.gpus)
        opts["security_opt"] = opts["security_opt"] + dev.pop("security_opt", [])
        opts.update(dev)
    return opts


class DockerExecutor:
    name = "docker"

    def __init__(self, host: HostSpec, client: docker.DockerClient | None = None) -> None:
        self.host = host
        self._client = client

    @property
    def client(self) -> docker.DockerClient:
        if self._client is None:
            self._client = connect(self.host)
        return self._client

    def image_digest(self, reference: str) -> tuple[str | None, str | None]:
        """(repo digest or image id, error) for an image present on the engine."""
        try:
            image = self.client.images.get(reference)
        except docker.errors.ImageNotFound:
            return None, (f"image {reference} is not present on {self.host.name}; pull it there "
                          "(or build it: make test-images for the local test images)")
        except docker.errors.APIError as exc:
            return None, f"engine error inspecting {reference}: {exc.explanation}"
        repo_digests = image.attrs.get("RepoDigests") or []
        digest = repo_digests[0].split("@", 1)[1] if repo_digests else image.id
        return digest, None

    def execute(self, task: Task, run_id: str, on_result: Callable[[Any], None] | None = None) -> Execution:
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        digest, problem = self.image_digest(task.image.reference)
        if problem:
            return _infra_failure(task, problem, timings, digest)
        container = None
        transcript = Transcript()
        stderr_tail = b""
        killed = threading.Event()
        try:
            t = time.perf_counter()
            container = self.client.containers.create(task.image.reference, **container_options(task, run_id))
            container.put_archive("/opt", probe_archive())
            shipped = workload_archive(task)
            if shipped is not None:
                container.put_archive("/opt", shipped)
            timings["create_s"] = time.perf_counter() - t
            deadline = overall_timeout(task)
            timer = threading.Timer(deadline, _kill, (container, killed))
            timer.daemon = True
            t = time.perf_counter()
            stream = container.attach(stdout=True, stderr=True, stream=True, logs=True, demux=True)
            container.start()
            timings["start_s"] = time.perf_counter() - t
            timer.start()
            try:
                seen = 0
                for out, err in stream:
                    if out:
                        transcript.feed(out)
                        if on_result and len(transcript.results) > seen:
                            for res in transcript.results[seen:]:
                                on_result(res)
                            seen = len(transcript.results)
                    if err:
                        stderr_tail = (stderr_tail + err)[-TAIL:]
                status = container.wait(timeout=60)
            finally:
                timer.cancel()
            timings["run_s"] = time.perf_counter() - t
            exit_code = int(status.get("StatusCode", -1))
        except (docker.errors.DockerException, RequestsConnectionError) as exc:
            return _infra_failure(task, f"engine error running {task.image.reference}: {str(exc)[:500]}",
                                  timings, digest)
        finally:
            if container is not None:
                try:
                    container.remove(force=True)
                except docker.errors.DockerException:
                    pass
        transcript.close()
        timings["total_s"] = time.perf_counter() - t0
        timings.update(transcript.breakdown())
        killed_msg = (f"the container passed its deadline of {overall_timeout(task):g}s and was killed"
                      if killed.is_set() else None)
        execution = conclude(transcript, task, exit_code=exit_code, killed=killed_msg,
                             log=stderr_tail.decode("utf-8", "replace"))
        return execution.model_copy(update={"timings": timings, "image_digest": digest})


def _kill(container: Any, killed: threading.Event) -> None:
    killed.set()
    try:
        container.kill()
    except docker.errors.DockerException:
        pass


def _infra_failure(task: Task, message: str, timings: dict[str, float], digest: str | None) -> Execution:
    return infrastructure_failure(task, message, timings=timings, image_digest=digest)


def reap(client: docker.DockerClient, run_id: str | None = None) -> int:
    """Remove leftover containers labelled by valorch (all, or one run's)."""
    label = f"{LABEL}.run={run_id}" if run_id else LABEL
    removed = 0
    for c in client.containers.list(all=True, filters={"label": label}):
        try:
            c.remove(force=True)
            removed += 1
        except docker.errors.DockerException:
            pass
    return removed


def gather_inventory(image, host: HostSpec, **kw: Any):  # noqa: ANN001, ANN201
    """The inventory probe in ``image`` on this engine: (raw dict | None, error | None, digest)."""
    from .inventory import gather_docker

    return gather_docker(image, host, **kw)
