"""Container device options for each backend, built from a host description.

Pure: no Docker here, so they can be tested on described hosts (no GPU is
needed to check that an MI300X box would get /dev/kfd and its render nodes).
"""

from __future__ import annotations

from typing import Any

from ..spec import GPU, HostSpec


def device_options(
    backend: str, host: HostSpec, gpus: tuple[GPU, ...] | None = None
) -> dict[str, Any]:
    """The ``ContainerSpec`` fields giving exactly the device access the backend needs, and
    no more. ``gpus`` pins the task to those GPUs (default: all of the host's GPUs of the
    backend's vendor)."""
    if backend == "cpu":
        return {}
    if backend == "rocm":
        chosen = gpus if gpus is not None else host.gpus_of("amd")
        devices = ["/dev/kfd:/dev/kfd:rwm"]
        for gpu in chosen:
            if gpu.render_minor is None:
                raise ValueError(
                    f"AMD GPU {gpu.index} on {host.name} has no render node (drm_render_minor)"
                )
            node = f"/dev/dri/renderD{gpu.render_minor}"
            devices.append(f"{node}:{node}:rwm")
        groups = [g for g in ("video", host.render_gid) if g is not None]
        return {
            "devices": tuple(devices),
            "group_add": tuple(str(g) for g in groups),
            # ROCm's runtime needs ptrace-like syscalls that the default profile blocks.
            # https://rocm.docs.amd.com/projects/install-on-linux/en/latest/how-to/docker.html
            "security_opt": ("seccomp=unconfined",),
            "shm_size": "8g",
        }
    if backend == "cuda":
        chosen = gpus if gpus is not None else host.gpus_of("nvidia")
        # the ids of the Engine API's DeviceRequest (docker.create_kwargs)
        return {
            "gpu_ids": tuple(gpu.uuid or str(gpu.index) for gpu in chosen),
            "shm_size": "8g",
        }
    raise ValueError(f"unknown backend {backend!r}")
