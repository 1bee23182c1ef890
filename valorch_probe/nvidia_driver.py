"""Why a CUDA build of torch sees no GPU on a host that has one: the host's driver.

The NVIDIA container runtime injects ``nvidia-smi`` into a GPU container. When torch
(a CUDA build) sees no device but ``nvidia-smi -q -x`` lists GPUs, the driver's newest
CUDA version (``cuda_version``) tells whether the image's CUDA runtime is newer than the
driver supports: a CUDA runtime runs on a driver of the same major version or newer (CUDA's
minor version compatibility), so an older major version cannot run it at all. The "needs a
GPU" skip then says so, with both versions and the fix, instead of reading as a host without
a GPU.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any, Dict, Optional

from . import tool_output


def driver_facts(timeout: float = 30.0) -> Optional[Dict[str, Any]]:
    """``nvidia-smi -q -x`` parsed (tool_output.nvidia_smi_xml), or None without the tool or a document."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        out = subprocess.run(
            [exe, "-q", "-x"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=timeout,
            check=False,
        ).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.SubprocessError):
        return None
    return tool_output.nvidia_smi_xml(out) or None


def _major(version: Optional[str]) -> Optional[int]:
    head = (version or "").split(".")[0]
    return int(head) if head.isdigit() else None


def no_gpu_note(torch_cuda: Optional[str], facts: Optional[Dict[str, Any]]) -> str:
    """The clause a "needs a GPU" skip gets on a CUDA build ("" when nvidia-smi lists no GPU)."""
    if not torch_cuda or not facts or not facts.get("gpus"):
        return ""
    driver, supported = facts.get("driver_version") or "?", facts.get("cuda_version") or ""
    n = len(facts["gpus"])
    seen = "nvidia-smi lists %d GPU%s (driver %s%s)" % (
        n,
        "" if n == 1 else "s",
        driver,
        ", CUDA %s" % supported if supported else "",
    )
    have, need = _major(supported), _major(torch_cuda)
    if have is not None and need is not None and have < need:
        return (
            "; %s, older than this torch's CUDA %s: the host's driver cannot run this image's CUDA "
            "runtime. Not a property of the image: update the host's NVIDIA driver to one for CUDA %d or "
            "newer" % (seen, torch_cuda, need)
        )
    mig = [g["bus_id"] or g["name"] for g in facts["gpus"] if g.get("mig") == "Enabled"]
    if mig:  # with MIG on, CUDA sees only the MIG devices the container was given
        return (
            "; %s, yet torch (CUDA %s) sees none; MIG mode is enabled on %s: the container sees only the MIG "
            "devices it is given (NVIDIA_VISIBLE_DEVICES=<gpu>:<mig> or MIG-<uuid>)"
            % (seen, torch_cuda, ", ".join(mig))
        )
    return "; %s, yet torch (CUDA %s) sees none: see torch.cuda.is_available()'s warning" % (
        seen,
        torch_cuda,
    )
