"""Images on an engine: presence, pulls with per-layer progress events, RepoDigests, and the
engine's free space. The pull is the engine's (its credentials come from the user's Docker
config, as for ``docker pull``); an interrupted pull leaves no tag behind, because the engine
tags an image only once every layer is in, and closing the stream cancels it."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import docker
import docker.errors
from requests.exceptions import ConnectionError as RequestsConnectionError

from .. import imageref
from ..errors import InfrastructureError
from ..spec import HostSpec, ImageSpec


def runnable(image: ImageSpec) -> str:
    """What the engine runs for ``image``: ``repo@sha256:…`` when its digest is known."""
    if image.digest and not image.local and image.executor == "docker":
        return imageref.parse(image.reference).pinned(image.digest)
    return image.reference


@dataclass(frozen=True)
class PullEvent:
    """One line of the engine's pull stream: a layer's status and bytes so far."""

    layer: str | None
    status: str
    current: int | None = None
    total: int | None = None


def inspect(client: docker.DockerClient, reference: str) -> dict[str, Any] | None:
    """The engine's description of ``reference`` (tag or ``repo@digest``), or None when absent."""
    try:
        return client.images.get(reference).attrs
    except docker.errors.ImageNotFound:
        return None
    except docker.errors.APIError as exc:
        if exc.status_code == 404:
            return None
        raise InfrastructureError(
            f"engine error inspecting {reference}: {exc.explanation}",
            "check the engine (docker info)",
        ) from None


def repo_digests(attrs: dict[str, Any] | None) -> tuple[str, ...]:
    return tuple((attrs or {}).get("RepoDigests") or ())


class Cancelled(Exception):  # noqa: N818  # a stop signal, caught by name in services/pull.py
    """The pull was cancelled (Ctrl-C in the main thread)."""


def pull(
    client: docker.DockerClient,
    host: HostSpec,
    reference: str,
    on_event: Callable[[PullEvent], None],
    cancel: threading.Event | None = None,
) -> None:
    """Pull ``reference`` on ``host``'s engine, reporting each stream line; an error the engine
    reports (auth, missing manifest, disk full) is an InfrastructureError naming the registry.
    ``cancel`` set (from another thread) stops the pull at its next progress line."""
    registry = (
        reference.split("/", 1)[0]
        if "/" in reference and any(c in reference.split("/", 1)[0] for c in ".:")
        else "docker.io"
    )

    def failed(detail: str) -> InfrastructureError:
        return InfrastructureError(
            f"pulling {reference} on {host.name} from registry {registry} failed: {detail}",
            _pull_hint(detail, registry),
        )

    stream = None
    try:
        stream = client.api.pull(reference, stream=True, decode=True)
        for line in stream:
            if cancel is not None and cancel.is_set():
                raise Cancelled(reference)
            if "error" in line:
                raise failed(line.get("errorDetail", {}).get("message") or line["error"])
            detail = line.get("progressDetail") or {}
            on_event(
                PullEvent(
                    line.get("id"),
                    line.get("status", ""),
                    detail.get("current"),
                    detail.get("total"),
                )
            )
    except docker.errors.APIError as exc:
        raise failed(str(exc.explanation or exc)) from None
    except (RequestsConnectionError, docker.errors.DockerException) as exc:
        raise InfrastructureError(
            f"engine of {host.name} failed while pulling {reference}: {str(exc)[:300]}",
            "check the engine (docker info) and pull again",
        ) from None
    finally:
        # On Ctrl-C the generator is closed here: the engine sees the client go and cancels the
        # pull; layers already complete stay in its content store, no tag is written.
        if stream is not None and hasattr(stream, "close"):
            stream.close()


def _pull_hint(detail: str, registry: str) -> str:
    low = detail.lower()
    if "unauthorized" in low or "authentication" in low or "denied" in low:
        return f"docker login {registry} (valorch uses the same Docker config), or check the repository name"
    if "not found" in low or "manifest unknown" in low:
        return "the tag or digest does not exist there: valorch images check shows what moved"
    if "no space" in low:
        return "free space on the engine (docker system prune) or pull to a host with room"
    return "check the registry and the network, then pull again"


def free_bytes(client: docker.DockerClient, host: HostSpec) -> int | None:
    """Free bytes where the engine keeps images, when that can be measured from here (a local
    unix-socket engine); None for remote engines."""
    if not host.endpoint.startswith("unix://"):
        return None
    try:
        root = client.info().get("DockerRootDir")
    except (docker.errors.DockerException, RequestsConnectionError):
        return None
    if not root or not os.path.isdir(root):
        return None
    st = os.statvfs(root)
    return st.f_bavail * st.f_frsize
