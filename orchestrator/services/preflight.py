"""Preflight of hosts before GPU work, and quarantine for a batch: a host that fails L0 gets
no task, the report says why, and no result is ever attributed to it."""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import InfrastructureError
from ..hosts import preflight
from ..hosts.preflight import Probe
from ..spec import HostSpec

PROBE_IMAGES = ("valorch/base:bookworm", "valorch/base:bullseye", "python:3-slim")


@dataclass(frozen=True)
class Verdict:
    host: str
    probes: tuple[Probe, ...] = ()

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.probes)

    @property
    def reason(self) -> str:
        return "; ".join(f"{p.name}: {p.detail}" for p in self.probes if not p.ok)

    def as_dict(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "ok": self.ok,
            "reason": self.reason,
            "probes": [
                {"level": p.level, "name": p.name, "ok": p.ok, "detail": p.detail}
                for p in self.probes
            ],
        }


def container_probe(host: HostSpec, backend: str, image: str | None = None) -> Probe:
    """L0: one tiny container starts on the host's engine with the backend's device options
    (``true`` in a small image; the CPU backend gets no devices)."""
    from ..executors.base import LABEL
    from ..executors.container import ContainerSpec
    from ..executors.docker import connect, create_kwargs, run_container
    from ..executors.pull import inspect

    try:
        client = connect(host, timeout=20)
    except InfrastructureError as exc:
        return _no_container(exc.message)
    tried = (image,) if image else PROBE_IMAGES
    present = next((ref for ref in tried if inspect(client, ref) is not None), None)
    if present is None:
        return _no_container(f"no small image to start on {host.name} (tried {', '.join(tried)})")
    spec = ContainerSpec(command=("true",), labels={LABEL: "1", f"{LABEL}.probe": "preflight"})
    try:
        if backend != "cpu":
            spec = spec.with_devices(backend, host, None)
    except ValueError as exc:
        return _no_container(str(exc))
    opts = create_kwargs(spec)
    try:
        ran = run_container(client, present, opts, [], 60, lambda chunk: None)
    except Exception as exc:  # noqa: BLE001 - any engine refusal is this host's preflight failure
        why = str(exc)[:300]
        return _no_container(f"a container with the {backend} device options did not start: {why}")
    if ran.exit_code != 0:
        tail = ran.stderr_tail[-200:]
        return _no_container(f"the {backend} container exited {ran.exit_code}: {tail}")
    return Probe(0, "container", True, f"{present} started with the {backend} device options")


def _no_container(why: str) -> Probe:
    return Probe(0, "container", False, why)


def level0(host: HostSpec, backend: str, image: str | None = None) -> Verdict:
    """Device nodes and driver version (read here when the engine is local), then the container."""
    probes: list[Probe] = []
    vendor = {"rocm": "amd", "cuda": "nvidia"}.get(backend)
    if vendor and host.endpoint.startswith("unix://"):  # a local engine
        probes += [preflight.device_nodes(vendor), preflight.driver_version(vendor)]
    if all(p.ok for p in probes):
        probes.append(container_probe(host, backend, image))
    return Verdict(host.name, tuple(probes))


def level1(host: HostSpec, backend: str, since: datetime | None = None) -> Verdict:
    """L0, then SMI health, rvs / dcgmi diag -r 1 and the kernel log (on this machine only:
    L1 reads the host's own tools and log, so it runs where valorch runs)."""
    first = level0(host, backend)
    vendor = {"rocm": "amd", "cuda": "nvidia"}.get(backend)
    if vendor is None:  # said, not silently the same as L0
        why = (
            "skipped: no GPU on this host (L1 reads SMI health, rvs / dcgmi diag and the "
            "kernel log of GPUs; L0 started a container without device options)"
        )
        return Verdict(host.name, (*first.probes, Probe(1, "gpu health", True, why)))
    if not first.ok:
        return first
    if not host.endpoint.startswith("unix://"):
        there = "L1 runs on the host itself: run valorch hosts check --level 1 there"
        return Verdict(host.name, (*first.probes, Probe(1, "local", True, there)))
    probes = (
        preflight.smi_health(vendor)
        + preflight.diagnostics(vendor)
        + [preflight.kernel_log(since, None)]
    )
    return Verdict(host.name, first.probes + tuple(probes))


def backends_of(host: HostSpec) -> tuple[str, ...]:
    return tuple(b for b, v in (("rocm", "amd"), ("cuda", "nvidia")) if host.gpus_of(v)) or ("cpu",)


def quarantine(pairs: Iterable[tuple[HostSpec, str]]) -> list[Verdict]:
    """L0 for each (host, GPU backend) a batch would use, concurrently; the failed verdicts
    (their hosts are quarantined for the batch by the caller)."""
    todo = sorted(
        {(h.name, b): (h, b) for h, b in pairs if b != "cpu"}.values(),
        key=lambda hb: (hb[0].name, hb[1]),
    )
    if not todo:
        return []
    with ThreadPoolExecutor(max_workers=min(8, len(todo))) as pool:
        verdicts = list(pool.map(lambda hb: level0(*hb), todo))
    return [v for v in verdicts if not v.ok]
