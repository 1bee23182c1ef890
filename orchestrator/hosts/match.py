"""Matching: what an image needs of a host, and which hosts have it (pure).

A CPU job runs anywhere (preferring hosts without GPUs); a ROCm job needs enough AMD
GPUs, a CUDA job enough NVIDIA GPUs and the NVIDIA runtime; when the image declares the
archs it is built for (``ImageSpec.archs``), only GPUs of those archs count; every
label must be present. No match is an error naming the nearest hosts.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import NoMatchingHostError
from ..spec import GPU, HostSpec, ImageSpec, vendor_of


@dataclass(frozen=True)
class Requirement:
    """What an image needs of a host."""

    backend: str
    archs: tuple[str, ...] = ()
    gpus: int = 1
    labels: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        image: ImageSpec,
        labels: tuple[str, ...] = (),
        gpus: int = 1,
        archs: tuple[str, ...] = (),
    ) -> Requirement:
        return cls(
            backend=str(image.backend),
            archs=tuple(archs or image.archs),
            gpus=0 if image.backend == "cpu" else gpus,
            labels=labels,
        )

    @property
    def vendor(self) -> str | None:
        return vendor_of(self.backend)

    def accepts(self, gpu: GPU) -> bool:
        """This GPU can serve the requirement: the backend's vendor and an allowed arch."""
        return gpu.vendor == self.vendor and (not self.archs or gpu.arch in self.archs)


def shortfall(req: Requirement, host: HostSpec) -> list[str]:
    """What ``host`` lacks for ``req`` (empty when it matches)."""
    missing = [f"label '{lab}'" for lab in req.labels if lab not in host.labels]
    if req.backend == "cpu":
        return missing
    usable = [g for g in host.gpus if req.accepts(g)]
    if len(usable) < req.gpus:
        kind = "AMD" if req.vendor == "amd" else "NVIDIA"
        archs = f" of arch {'/'.join(req.archs)}" if req.archs else ""
        have = ", ".join(sorted({g.arch for g in host.gpus})) or "none"
        missing.append(f"{req.gpus} {kind} GPU(s){archs} (has {len(usable)}; GPUs present: {have})")
    if req.backend == "cuda" and not host.nvidia_runtime:
        missing.append("the NVIDIA container runtime")
    return missing


def match(req: Requirement, hosts: tuple[HostSpec, ...], image: str = "") -> tuple[HostSpec, ...]:
    """Hosts that can run ``req``; CPU work prefers hosts without GPUs. No match is an error
    naming the nearest hosts and what they lack, never a silent CPU fallback."""
    ok = [h for h in hosts if not shortfall(req, h)]
    if ok:
        if req.backend == "cpu":
            ok.sort(key=lambda h: len(h.gpus))
        return tuple(ok)
    near = sorted(hosts, key=lambda h: len(shortfall(req, h)))[:3]
    detail = "\n".join(f"  {h.name}: lacks {', '.join(shortfall(req, h))}" for h in near)
    what = f"image {image} ({req.backend})" if image else req.backend
    raise NoMatchingHostError(
        f"no host can run {what}:\n{detail}",
        "run on a host with that hardware, add one to the host inventory, "
        "or pass --cpu-only to run only the checks that need no GPU (GPU checks are reported 'skip')",
    )
