"""Run the inventory probe (``python3 -m valorch_probe inventory``) in an image.

Same rules as a suite run: the probe is mounted read-only from its volume, no
network, no privileges, no devices (reading files and package metadata needs
no GPU, so any host with an engine can audit any image), a deadline, and the
container is always removed. Failures are returned as a message, never raised,
apart from an engine that does not answer (``InfrastructureError`` from
``connect``).

Each gatherer returns ``(raw inventory dict | None, error | None, digest | None)``;
the raw dict is untrusted and validated by ``audit.parse_inventory``.
"""

from __future__ import annotations

import sys
import uuid
from typing import Any

from .. import proc
from ..spec import HostSpec, ImageSpec
from .base import PROBE_PACKAGE, probe_copy
from .container import ContainerSpec, labels_for, local_env, probe_command
from .transcript import Transcript

# The gatherer imports torch once to read what it was compiled against (up to
# 180 s inside the probe); the rest is file reads and a few `-v` commands.
DEADLINE = 600.0
Gathered = tuple[dict[str, Any] | None, str | None, str | None]


def _outcome(
    transcript: Transcript, exit_code: int | None, killed: bool, stderr: str, where: str
) -> tuple[dict[str, Any] | None, str | None]:
    transcript.close()
    if transcript.inventory is not None:
        return transcript.inventory, None
    tail = stderr.strip().splitlines()[-3:]
    detail = (": " + " | ".join(tail)[-600:]) if tail else ""
    why = f"the inventory probe in {where} exited with code {exit_code} without reporting{detail}"
    if killed:
        why = f"the inventory probe in {where} passed its deadline of {DEADLINE:g}s and was killed"
    elif transcript.fatal:
        why = f"the inventory probe in {where} refused to run: {transcript.fatal}"
    elif exit_code == 127 or ("No such file" in stderr and "python3" in stderr):
        why = f"{where} has no python3 on its PATH: the inventory probe needs Python >= 3.8{detail}"
    return None, why


def gather_docker(image: ImageSpec, host: HostSpec) -> Gathered:
    import docker.errors
    from requests.exceptions import ConnectionError as RequestsConnectionError

    from .docker import DockerExecutor, connect, create_kwargs, run_container, with_probe
    from .pull import runnable

    client = connect(host)
    reference = runnable(image)  # a pinned digest is what is audited, never whatever the tag holds
    digest, _id, problem = DockerExecutor(host, client).image_names(reference)
    if problem:
        return None, problem, digest
    transcript = Transcript()
    labels = labels_for(str(uuid.uuid4()), "inventory", image.alias)  # no devices, no network
    options = create_kwargs(ContainerSpec(command=probe_command("inventory"), labels=labels))
    try:
        ran = run_container(
            client,
            reference,
            with_probe(options, client, reference),
            [],
            DEADLINE,
            transcript.feed,
        )
    except (docker.errors.DockerException, RequestsConnectionError) as exc:
        why = f"engine error gathering the inventory of {image.reference}: {str(exc)[:500]}"
        return None, why, digest
    raw, error = _outcome(transcript, ran.exit_code, ran.killed, ran.stderr_tail, image.reference)
    return raw, error, digest


def gather_host() -> Gathered:
    """The inventory of the local interpreter's environment (``--image host``)."""
    python = sys.executable
    transcript = Transcript()
    with probe_copy() as tmp:
        done = proc.stream(
            [python, "-m", PROBE_PACKAGE, "inventory"],
            transcript.feed,
            timeout=DEADLINE,
            env=local_env(tmp),
            cwd=tmp,
        )
    if done.error:
        return None, f"cannot start {python}: {done.error}", None
    where = f"the local interpreter {python}"
    raw, error = _outcome(transcript, done.returncode, done.timed_out, done.stderr_tail, where)
    return raw, error, None


def image_digest(image: ImageSpec, host: HostSpec) -> str | None:
    """The digest of ``image`` on ``host``'s engine (None for the host interpreter, or when
    it is not there): what a stored inventory of the same image is found by."""
    if image.executor == "host":
        return None
    from .docker import DockerExecutor
    from .pull import runnable

    digest, _id, problem = DockerExecutor(host).image_names(runnable(image))
    return None if problem else digest


def gather_inventory(image: ImageSpec, host: HostSpec) -> Gathered:
    return gather_host() if image.executor == "host" else gather_docker(image, host)
