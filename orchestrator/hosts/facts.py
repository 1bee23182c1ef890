"""What ``hosts probe`` says about a host beyond its GPUs, each fact from evidence on that
host: the detection container's view of the host's kernel (/proc/cpuinfo, /proc/meminfo,
uname), its /sys (driver module versions), /opt and /usr/local (ROCm and CUDA release
files, read-only), nvidia-smi when the container can run it, and the engine's own
``docker info``. Pure functions over that report; a fact with no evidence is absent,
never guessed."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

MAX = 200


@dataclass(frozen=True)
class Fact:
    name: str
    value: str
    evidence: str


def _clip(value: Any) -> str:
    return " ".join(str(value).split())[:MAX]


def _cpu(cpuinfo: str | None, engine: dict[str, Any]) -> list[Fact]:
    facts = []
    if cpuinfo:
        models = re.findall(r"^model name\s*:\s*(.+)$", cpuinfo, re.M) or re.findall(
            r"^Model\s*:\s*(.+)$", cpuinfo, re.M
        )
        if models:
            facts.append(Fact("cpu model", _clip(models[0]), "/proc/cpuinfo (model name)"))
        count = len(re.findall(r"^processor\s*:", cpuinfo, re.M))
        if count:
            facts.append(Fact("cpus", str(count), "/proc/cpuinfo (processor entries)"))
    elif isinstance(engine.get("NCPU"), int):
        facts.append(Fact("cpus", str(engine["NCPU"]), "docker info (NCPU)"))
    return facts


def _memory(meminfo: str | None, engine: dict[str, Any]) -> list[Fact]:
    m = re.search(r"^MemTotal:\s*(\d+)\s*kB", meminfo or "", re.M)
    if m:
        return [Fact("memory", f"{int(m.group(1)) / 2**20:.1f} GiB", "/proc/meminfo (MemTotal)")]
    if isinstance(engine.get("MemTotal"), int):
        return [Fact("memory", f"{engine['MemTotal'] / 2**30:.1f} GiB", "docker info (MemTotal)")]
    return []


def _drivers(modules: dict[str, Any], kernel: str | None, smi: str | None) -> list[Fact]:
    """Per driver module: its version file, else (nvidia) what nvidia-smi says, else a loaded
    module without a version file (the driver that came with the kernel)."""
    facts = []
    smi_driver = re.search(r"Driver Version:\s*(\S+)", smi or "")
    for module in ("amdgpu", "nvidia"):
        version = modules.get(module)
        if version:
            facts.append(
                Fact("gpu driver", f"{module} {_clip(version)}", f"/sys/module/{module}/version")
            )
        elif module == "nvidia" and smi_driver:
            facts.append(Fact("gpu driver", f"nvidia {_clip(smi_driver.group(1))}", "nvidia-smi"))
        elif version == "":
            said = f"{module} (in-kernel{', ' + kernel if kernel else ''})"
            facts.append(Fact("gpu driver", said, f"/sys/module/{module} (no version file)"))
    return facts


def _cuda_release(path: str, text: str) -> str | None:
    if path.endswith(".json"):
        try:
            doc = json.loads(text)
        except ValueError:
            return None
        version = (doc.get("cuda") or {}).get("version") if isinstance(doc, dict) else None
        return _clip(version) if version else None
    m = re.search(r"CUDA Version\s+(\S+)", text)
    return _clip(m.group(1)) if m else None


def _runtimes(rocm: dict[str, Any], cuda: dict[str, Any], smi: str | None) -> list[Fact]:
    facts = []
    for path, text in sorted(rocm.items()):
        if text and text.strip():
            facts.append(Fact("rocm", _clip(text.strip().splitlines()[0]), f"/opt/{path}"))
    for path, text in sorted(cuda.items()):
        version = _cuda_release(path, text or "")
        if version:
            facts.append(Fact("cuda toolkit", version, f"/usr/local/{path}"))
    m = re.search(r"CUDA Version:\s*(\S+)", smi or "")
    if m:
        facts.append(Fact("cuda (driver supports)", _clip(m.group(1)), "nvidia-smi"))
    return facts


def _engine(engine: dict[str, Any]) -> list[Fact]:
    if not engine.get("ServerVersion"):
        return []
    runtimes = ", ".join(sorted(engine.get("Runtimes") or {}))
    value = (
        f"docker {engine['ServerVersion']}, default runtime {engine.get('DefaultRuntime') or '?'}"
    )
    value = _clip(value + (f" (runtimes: {runtimes})" if runtimes else ""))
    facts = [
        Fact("container runtime", value, "docker info (ServerVersion, DefaultRuntime, Runtimes)")
    ]
    if engine.get("OperatingSystem"):
        facts.append(Fact("os", _clip(engine["OperatingSystem"]), "docker info (OperatingSystem)"))
    return facts


def host_facts(found: dict[str, Any]) -> tuple[Fact, ...]:
    """The facts in a detection report (executors/engine_probe.run_detect), in reading order."""
    raw = found.get("facts") or {}
    engine = found.get("engine") or {}
    kernel = found.get("kernel")
    smi = raw.get("nvidia_smi")
    facts = _cpu(raw.get("cpuinfo"), engine) + _memory(raw.get("meminfo"), engine)
    if kernel:
        facts.append(
            Fact("kernel", _clip(kernel), "uname -r in the detection container (the host's kernel)")
        )
    if raw:  # a detection report that looked: what it did not find is a fact too
        facts += _drivers(raw.get("modules") or {}, kernel, smi) or [
            Fact("gpu driver", "none", "no /sys/module/amdgpu or /sys/module/nvidia, no nvidia-smi")
        ]
        none = "no ROCm release under /opt, no CUDA toolkit under /usr/local, no nvidia-smi"
        facts += _runtimes(raw.get("rocm") or {}, raw.get("cuda") or {}, smi) or [
            Fact("rocm / cuda", "none", none)
        ]
    facts += _engine(engine)
    return tuple(facts)
