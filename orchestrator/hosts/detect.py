"""Hosts: GPU detection (KFD sysfs, nvidia-smi) and matching images to hosts.

Parsers are pure functions over text so they can be tested on fixture files;
``detect_local`` is the one place that reads this machine.
"""

from __future__ import annotations

import grp
import os
import platform
import socket
from pathlib import Path

from .. import proc
from ..spec import GPU, HostSpec

KFD_NODES = Path("/sys/class/kfd/kfd/topology/nodes")
NVIDIA_QUERY = "index,name,uuid,memory.total,compute_cap,driver_version"


def gfx_from_target_version(value: int) -> str:
    """KFD ``gfx_target_version`` → gfx arch: 90402 → gfx942, 90010 → gfx90a (9.0.10: minor
    and stepping are printed in hex), 110000 → gfx1100."""
    major, rest = divmod(value, 10000)
    minor, step = divmod(rest, 100)
    return f"gfx{major}{minor:x}{step:x}"


def parse_kfd_properties(text: str) -> dict[str, int]:
    props: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                props[parts[0]] = int(parts[1])
            except ValueError:
                continue
    return props


def _kfd_gpus(nodes: dict[str, str]) -> tuple[GPU, ...]:
    """AMD GPUs from KFD topology nodes (name -> properties): CPU nodes have target version 0."""
    gpus: list[GPU] = []
    for name in sorted(nodes, key=lambda n: int(n) if n.isdigit() else 1 << 30):
        props = parse_kfd_properties(nodes[name])
        if props.get("gfx_target_version"):
            arch = gfx_from_target_version(props["gfx_target_version"])
            minor = props.get("drm_render_minor")
            gpus.append(GPU(vendor="amd", arch=arch, index=len(gpus), render_minor=minor))
    return tuple(gpus)


def amd_gpus_from_kfd(nodes_dir: Path = KFD_NODES) -> tuple[GPU, ...]:
    """AMD GPUs from this machine's KFD topology."""
    nodes: dict[str, str] = {}
    for node in nodes_dir.iterdir() if nodes_dir.is_dir() else ():
        try:
            nodes[node.name] = (node / "properties").read_text()
        except OSError:
            continue
    return _kfd_gpus(nodes)


def parse_nvidia_smi(csv_text: str) -> tuple[GPU, ...]:
    """``nvidia-smi --query-gpu=NVIDIA_QUERY --format=csv,noheader,nounits`` → GPUs (sm_XY)."""
    gpus: list[GPU] = []
    for line in csv_text.strip().splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 5 or not cells[0].isdigit():
            continue
        cap = cells[4].replace(".", "")
        mem = int(float(cells[3])) if cells[3].replace(".", "").isdigit() else None
        gpus.append(
            GPU(
                vendor="nvidia",
                arch=f"sm_{cap}",
                index=int(cells[0]),
                product=cells[1],
                uuid=cells[2],
                memory_mib=mem,
            )
        )
    return tuple(gpus)


def _gid(name: str) -> int | None:
    try:
        return grp.getgrnam(name).gr_gid
    except KeyError:
        return None


def detect_local(
    name: str | None = None, endpoint: str = "unix:///var/run/docker.sock"
) -> HostSpec:
    gpus = list(amd_gpus_from_kfd())
    nvidia = proc.call(
        ["nvidia-smi", f"--query-gpu={NVIDIA_QUERY}", "--format=csv,noheader,nounits"], timeout=20
    )
    if nvidia.ok:
        gpus.extend(parse_nvidia_smi(nvidia.stdout))
    labels = [
        "cpu",
        *sorted({"rocm" if g.vendor == "amd" else "cuda" for g in gpus}),
        *sorted({g.arch for g in gpus}),
    ]
    return HostSpec(
        name=name or socket.gethostname(),
        endpoint=endpoint,
        labels=tuple(labels),
        slots=max(1, len(gpus)) if gpus else max(1, (os.cpu_count() or 1) // 2),
        gpus=tuple(gpus),
        render_gid=_gid("render"),
        video_gid=_gid("video"),
        nvidia_runtime=bool(nvidia.ok),
        kernel=platform.release(),
    )


def gpus_from_detection(found: dict) -> tuple[GPU, ...]:
    """GPUs from what the detection container reported (same parsers as the local detection)."""
    gpus = list(_kfd_gpus(found.get("kfd", {})))
    if found.get("nvidia"):
        gpus.extend(parse_nvidia_smi(found["nvidia"]))
    return tuple(gpus)
