"""The host inventory: ``hosts.yaml`` (``--hosts FILE`` / ``VALORCH_HOSTS``), else the local host.

```yaml
hosts:
  - name: local
    endpoint: unix:///var/run/docker.sock
    detect: true            # merge the GPUs, groups and labels detected on this machine
    slots: 2
  - name: gpu-box
    endpoint: tcp://gpu-box:2376
    tls: {ca: certs/ca.pem, cert: certs/cert.pem, key: certs/key.pem}   # relative to this file
    labels: [rocm, gfx942]
    gpus: [{vendor: amd, arch: gfx942, index: 0, render_minor: 128}]
  - name: build-node
    endpoint: ssh://ci@build-node   # through the ssh client (keys from ~/.ssh)
    slots: 4
```

A top-level list of hosts is accepted as well. Errors name the file, line and key. A field
a run ignores (``spec.HostSpec`` declares where each acts: applies.py) is a warning, not
exit 2: a hosts file is an inventory shared by every job and executor, so a field that
acts for the next job is no mistake in this one.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

from .. import applies
from ..errors import SpecError
from ..spec import HostSpec
from ..yamlio import Document, load, validate
from .detect import detect_local

ENV = "VALORCH_HOSTS"
SCHEMES = ("unix://", "tcp://", "ssh://", "npipe://")


def _listed(doc: Document) -> tuple[object, tuple[str, ...]]:
    """The list of hosts of a file, and where it is: the top level, or under ``hosts``."""
    if isinstance(doc.data, dict) and set(doc.data) == {"hosts"}:
        return doc.data["hosts"], ("hosts",)
    return doc.data, ()


def load_hosts(path: Path) -> tuple[HostSpec, ...]:
    doc = load(Path(path), "host inventory")
    data, root = _listed(doc)
    if not isinstance(data, list) or not data:
        raise SpecError(
            f"{doc.path}:{doc.line(())}: host inventory: expected a non-empty list of hosts "
            "(or a mapping with one key, 'hosts')",
            "see examples/hosts.yaml",
        )
    hosts: list[HostSpec] = []
    for i, entry in enumerate(data):
        sub = doc.sub((*root, i))
        hosts.append(_host(sub, entry, i))
    seen: set[str] = set()
    for i, host in enumerate(hosts):
        if host.name in seen:
            raise SpecError(
                f"{doc.path}:{doc.sub((*root, i)).line(('name',))}: host inventory: "
                f"duplicate host name '{host.name}'",
                "give every host its own name",
            )
        seen.add(host.name)
    return tuple(hosts)


def _host(sub: Document, entry: object, index: int) -> HostSpec:
    if not isinstance(entry, dict):
        raise SpecError(
            f"{sub.path}:{sub.line(())}: host {index}: must be a mapping (name, endpoint, ...)"
        )
    entry = dict(entry)
    detect = entry.pop("detect", False)
    tls = entry.get("tls")
    if isinstance(tls, dict):  # its files are relative to the inventory
        entry["tls"] = dict(tls)
        for k in ("ca", "cert", "key"):
            if isinstance(tls.get(k), str):
                entry["tls"][k] = str((sub.path.parent / tls[k]).resolve())
    host = validate(
        Document(sub.path, entry, sub.node), HostSpec, f"host {entry.get('name', index)}"
    )
    if not host.endpoint.startswith(SCHEMES):
        raise SpecError(
            f"{sub.path}:{sub.line(('endpoint',))}: host {host.name}: key 'endpoint': "
            f"'{host.endpoint}' is not unix://, tcp:// or ssh://",
            "e.g. unix:///var/run/docker.sock, tcp://host:2376 (with tls), ssh://user@host",
        )
    if host.tls is not None and not host.endpoint.startswith("tcp://"):
        raise SpecError(
            f"{sub.path}:{sub.line(('tls',))}: host {host.name}: key 'tls' applies to tcp:// "
            "endpoints only"
        )
    if host.tls is not None:
        for what in ("ca", "cert", "key"):
            if not Path(getattr(host.tls, what)).is_file():
                raise SpecError(
                    f"{sub.path}:{sub.line(('tls', what))}: host {host.name}: key 'tls.{what}': "
                    f"no such file {getattr(host.tls, what)}",
                    "paths are relative to the inventory file",
                )
    if detect:
        local = detect_local(host.name, host.endpoint)
        detected = ("gpus", "slots", "render_gid", "video_gid")  # unless the file gives them
        update = {k: getattr(local, k) for k in detected if k not in entry}
        update["labels"] = tuple(dict.fromkeys((*host.labels, *local.labels)))
        update["nvidia_runtime"] = host.nvidia_runtime or local.nvidia_runtime
        update["kernel"] = host.kernel or local.kernel
        host = host.model_copy(update=update)
    return host


def _path(given: Path | None) -> Path | None:
    """``--hosts FILE``, else ``$VALORCH_HOSTS``, else none."""
    return given or (Path(os.environ[ENV]) if os.environ.get(ENV) else None)


def resolve_hosts(given: Path | None) -> tuple[HostSpec, ...]:
    """``--hosts FILE``, else ``$VALORCH_HOSTS``, else the local host as detected."""
    path = _path(given)
    return (detect_local(),) if path is None else load_hosts(path)


def unused_fields(given: Path | None, executors: Collection[str]) -> list[str]:
    """A warning, naming file, line, key and host, for each field of the hosts file a run
    reads that its images, run on ``executors``, ignore (the file was loaded and validated
    already: this reads where each key is written)."""
    path = _path(given)
    unused = [
        (k, why) for k, field in applies.fields(HostSpec) if (why := field.unused_on(executors))
    ]
    if path is None or not unused:
        return []
    doc = load(path, "host inventory")
    data, root = _listed(doc)
    return [
        f"{doc.path}:{doc.sub((*root, i)).line((key,))}: host inventory: key '{key}' of host "
        f"{entry.get('name')} has no effect on this run: {why}; it is ignored"
        for i, entry in enumerate(data if isinstance(data, list) else [])
        if isinstance(entry, dict)
        for key, why in unused
        if entry.get(key) not in (None, False, [], ())
    ]
