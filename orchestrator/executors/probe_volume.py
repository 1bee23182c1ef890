"""The probe on an engine: a named volume filled once per probe version and mounted
read-only as the package in every probe container (the engine's volumes are this module's
side effect).

Copying the probe into each container (``put_archive``) cost about 0.06 s per container on
the reference machine, whatever the archive's size: the engine extracts every archive in
a helper process of its own (docs/benchmarks.md). A volume is created and filled once per
engine and probe version, and a container mounts it at no cost. It works on a remote
engine as on a local one (nothing is bind-mounted from this machine).

Two volumes per version, published the way a file is renamed into place:

- ``valorch-probe-<digest>-<random>``: the package's files, written through a container
  that is created, never started, and removed;
- ``valorch-probe-<digest>``: empty, created only once its data volume is whole, with the
  data volume's name as a label. The engine creates a volume name once, and a second
  create returns the first one, labels and all: of two valorch processes filling at once,
  both use the first one's data, and the other removes its own.

A probe container mounts the data volume read-only: no check can change the probe that
the next task runs. The volumes are looked up for every task (two requests of a few
milliseconds), so that one removed meanwhile (``docker volume prune``) is published again
rather than mounted empty. When a version is published, other versions' volumes older
than a day that no container uses are removed (a valorch of another version may still be
running its batch on this engine).
"""

from __future__ import annotations

import contextlib
import secrets
from datetime import datetime, timedelta, timezone
from typing import Any

import docker
import docker.errors
import docker.types
from requests.exceptions import ConnectionError as RequestsConnectionError

from .base import LABEL, PROBE_PACKAGE, probe_package
from .container import PROBE_ROOT, labels_for

PREFIX = "valorch-probe-"
#: on both volumes: the probe's content digest (what ``_prune`` keeps)
VERSION_LABEL = f"{LABEL}.probe"
#: on the published (empty) volume: the name of the data volume it vouches for
DATA_LABEL = f"{LABEL}.probe.data"
#: where the data volume is mounted while it is filled (a never-started container)
FILL_AT = "/valorch-probe-fill"
TARGET = f"{PROBE_ROOT}/{PROBE_PACKAGE}"
#: the filling container's run label (it belongs to no run)
FILL_RUN = "probe-fill"
#: another version's volumes are removed once this old (and unused)
STALE = timedelta(days=1)


def mount(client: docker.DockerClient, image: str) -> docker.types.Mount:
    """The read-only mount of this valorch's probe for a container on ``client``'s engine,
    filling and publishing the volume first if this engine has none (through ``image``,
    which must be present there: any image will do, it never runs). Engine errors
    propagate (an infrastructure failure of the task, as any engine error)."""
    archive, digest = probe_package()
    data = _published(client, digest) or _publish(client, image, archive, digest)
    return docker.types.Mount(target=TARGET, source=data, type="volume", read_only=True)


def _published(client: docker.DockerClient, digest: str) -> str | None:
    """The data volume this engine published for ``digest``, when the published volume
    names one that carries this digest (an empty volume the engine made up under that name
    when it had gone does not)."""
    try:
        seal = client.volumes.get(PREFIX + digest)
    except docker.errors.NotFound:
        return None
    name = (seal.attrs.get("Labels") or {}).get(DATA_LABEL) or ""
    try:
        data = client.volumes.get(name) if name.startswith(PREFIX + digest) else None
    except docker.errors.NotFound:
        data = None
    if data is not None and (data.attrs.get("Labels") or {}).get(VERSION_LABEL) == digest:
        return str(name)
    for volume in (seal, data):  # published again, under a fresh data volume
        if volume is not None:
            _remove_volume(volume)
    return None


def _publish(client: docker.DockerClient, image: str, archive: bytes, digest: str) -> str:
    labels = {VERSION_LABEL: digest, LABEL: "probe"}
    mine = f"{PREFIX}{digest}-{secrets.token_hex(4)}"
    volume = client.volumes.create(mine, labels=labels)
    try:
        _fill(client, image, mine, archive, digest)
        seal = _seal(client, digest, {**labels, DATA_LABEL: mine})
        winner = str((seal.attrs.get("Labels") or {}).get(DATA_LABEL) or "")
    except BaseException:
        _remove_volume(volume)
        raise
    if winner != mine:  # another valorch published first: its data, and ours goes
        _remove_volume(volume)
    _prune(client, digest)
    return winner or mine


def _seal(client: docker.DockerClient, digest: str, labels: dict[str, str]) -> Any:
    """The published volume: created with ``labels``, or the one another valorch created
    first (Docker returns it; an engine that answers 409 Conflict instead is asked for it)."""
    try:
        return client.volumes.create(PREFIX + digest, labels=labels)
    except docker.errors.APIError as exc:
        if exc.status_code != 409:
            raise
        return client.volumes.get(PREFIX + digest)


def _fill(
    client: docker.DockerClient, image: str, volume: str, archive: bytes, digest: str
) -> None:
    options: dict[str, Any] = {
        "command": ["true"],
        "network_mode": "none",
        "read_only": True,
        # a valorch killed meanwhile leaves it to the next run's sweep (docker.reap_known)
        "labels": {**labels_for(FILL_RUN, "probe", image), VERSION_LABEL: digest},
        "mounts": [docker.types.Mount(target=FILL_AT, source=volume, type="volume")],
    }
    container = client.containers.create(image, **options)
    try:
        if not container.put_archive(FILL_AT, archive):
            raise docker.errors.DockerException(
                f"the engine refused the probe's files for {volume}"
            )
    finally:
        with contextlib.suppress(docker.errors.DockerException, RequestsConnectionError):
            container.remove(force=True)


def _prune(client: docker.DockerClient, keep: str) -> None:
    """Remove other probe versions' volumes older than STALE that no container uses (the
    engine refuses to remove one in use)."""
    now = datetime.now(timezone.utc)
    with contextlib.suppress(docker.errors.DockerException, RequestsConnectionError):
        for volume in client.volumes.list(filters={"label": VERSION_LABEL}):
            if (volume.attrs.get("Labels") or {}).get(VERSION_LABEL) == keep:
                continue
            if now - _created(volume.attrs.get("CreatedAt")) > STALE:
                _remove_volume(volume)


def _created(text: Any) -> datetime:
    """A volume's CreatedAt (RFC 3339); now when the engine does not say."""
    try:
        when = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return datetime.now(timezone.utc)
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _remove_volume(volume: Any) -> None:
    with contextlib.suppress(docker.errors.DockerException, RequestsConnectionError):
        volume.remove()
