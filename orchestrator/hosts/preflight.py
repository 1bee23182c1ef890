"""Host preflight, tiered as DCGM's diagnostic levels and ROCm's cvs are: L0 before every GPU
task placement (device nodes, readable driver/runtime versions; the tiny container with
the device options is the service's), L1 on demand (SMI health, rvs / dcgmi diag -r 1,
the kernel log during a window). Parsers are pure and tested on recorded outputs; the few
reads of this machine (/dev, /sys, SMI commands through proc) are the functions below them."""

from __future__ import annotations

import csv
import functools
import glob
import io
import json
import os
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .. import proc

TEMP_LIMIT_C = 95.0  # hotspot/junction above this: thermal trouble, results would be throttled
# application faults (illegal address, MMU fault, reset channel)
XID_BENIGN = frozenset({13, 31, 43, 45})


#: what ``parse_nvidia_health`` and ``parse_nvidia_apps`` read (``--format=csv,noheader,nounits``)
NVIDIA_HEALTH = (
    "index,pci.bus_id,temperature.gpu,ecc.errors.uncorrected.volatile.total,memory.used,"
    "memory.total"
)
NVIDIA_APPS = "gpu_bus_id,pid,process_name,used_memory"


@dataclass(frozen=True)
class Probe:
    """One preflight observation: ``ok`` False makes the host fail the level."""

    level: int
    name: str
    ok: bool
    detail: str


def _num(value: Any) -> float | None:
    if isinstance(value, dict):
        value = value.get("value")
    try:
        return float(str(value).strip().split()[0])
    except (ValueError, IndexError):
        return None


def parse_amd_smi_metric(text: str) -> list[dict[str, Any]]:
    """Per GPU from ``amd-smi metric --json``: hottest temperature, uncorrectable ECC count."""
    doc = json.loads(text)
    if isinstance(doc, dict):
        doc = doc.get("gpu_data") or [doc]
    out: list[dict[str, Any]] = []
    for gpu in doc:
        temps = {k: _num(v) for k, v in (gpu.get("temperature") or {}).items()}
        ecc = gpu.get("ecc") or {}
        out.append(
            {
                "gpu": int(gpu.get("gpu", len(out))),
                "temperature_c": max((t for t in temps.values() if t is not None), default=None),
                "ecc_uncorrectable": _num(ecc.get("total_uncorrectable_count")),
            }
        )
    return out


def parse_amd_smi_process(text: str) -> list[dict[str, Any]]:
    """Processes holding GPU memory from ``amd-smi process --json``: pid, name, MB."""
    doc = json.loads(text)
    out = []
    for gpu in doc if isinstance(doc, list) else [doc]:
        for item in gpu.get("process_list") or []:
            info = item.get("process_info") if isinstance(item, dict) else None
            if not isinstance(info, dict):
                continue  # "No running processes detected"
            mem = (info.get("memory_usage") or {}).get("vram_mem") or info.get("mem")
            out.append(
                {"pid": int(info.get("pid", 0)), "name": info.get("name", ""), "mb": _mb(mem)}
            )
    return out


def _mb(value: Any) -> float:
    if isinstance(value, dict):
        n, unit = _num(value) or 0.0, str(value.get("unit", "MB")).upper()
    else:
        n, unit = _num(value) or 0.0, "B" if not str(value).strip().upper().endswith("MB") else "MB"
    return {"B": n / 2**20, "KB": n / 1024, "MB": n, "GB": n * 1024}.get(unit, n)


def parse_nvidia_health(text: str) -> list[dict[str, Any]]:
    """``nvidia-smi --query-gpu=NVIDIA_HEALTH``, per GPU."""
    out = []
    for row in csv.reader(io.StringIO(text)):
        if len(row) < 6:
            continue
        idx, _, temp, ecc = (c.strip() for c in row[:4])
        out.append({"gpu": int(idx), "temperature_c": _num(temp), "ecc_uncorrectable": _num(ecc)})
    return out


def parse_nvidia_apps(text: str) -> list[dict[str, Any]]:
    """``nvidia-smi --query-compute-apps=NVIDIA_APPS``: pid, name, MB per process."""
    out = []
    for row in csv.reader(io.StringIO(text)):
        if len(row) >= 4 and row[1].strip().isdigit():
            out.append({"pid": int(row[1]), "name": row[2].strip(), "mb": _num(row[3]) or 0.0})
    return out


def parse_dcgmi_diag(text: str) -> list[tuple[str, str]]:
    """(test, result) rows of ``dcgmi diag -r 1`` that did not pass (Fail / Warn), with the
    ``Warning`` detail rows attached to the test above them."""
    bad: list[tuple[str, str]] = []
    for line in text.splitlines():
        m = re.match(r"\|\s*([^|]+?)\s*\|\s*([^|]*?)\s*\|\s*$", line)
        if not m or m.group(1).startswith("-"):
            continue
        name, result = m.group(1), m.group(2)
        if result.lower().startswith(("fail", "warn")):
            bad.append((name, result))
        elif name.lower() == "warning" and bad:
            bad[-1] = (bad[-1][0], f"{bad[-1][1]}: {result}")
    return bad


def parse_rvs(text: str) -> list[str]:
    """The lines of an ``rvs`` run that report a failure (``pass: FALSE``, ``[ERROR]``)."""
    return [
        line.strip()
        for line in text.splitlines()
        if re.search(r"pass:\s*false|\[error\s*\]|\bfailed\b", line, re.I)
    ]


_AMDGPU_BAD = re.compile(
    r"\*ERROR\*|page fault|GPU reset|ring \S+ timeout|timed out|uncorrect|poison|"
    r"RAS.*(?:error|event)|ECC.*error|GPU hang|Memory access fault",
    re.I,
)
_XID = re.compile(r"NVRM: Xid \(PCI:([0-9a-fA-F:.]+)\): (\d+)")
_STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})[,.]?\d*([+-]\d{2}:?\d{2}|Z)?")


def scan_kernel_log(
    text: str, since: datetime | None = None, until: datetime | None = None
) -> list[str]:
    """amdgpu errors and NVIDIA Xid events in ``dmesg --time-format iso`` (or journalctl -k -o
    short-iso) output within [since, until]; Xids that are an application's own fault are left out."""
    found = []
    for line in text.splitlines():
        m = _STAMP.match(line)
        if m and (since or until):
            when = datetime.fromisoformat(m.group(1) + _tz(m.group(2)))
            if (since and when < since) or (until and when > until):
                continue
        x = _XID.search(line)
        if x:
            if int(x.group(2)) not in XID_BENIGN:
                found.append(line.strip())
        elif "amdgpu" in line and _AMDGPU_BAD.search(line):
            found.append(line.strip())
    return found


def _tz(text: str | None) -> str:
    if not text or text == "Z":
        return "+00:00"
    return text if ":" in text else f"{text[:3]}:{text[3:]}"


def health(gpus: list[dict[str, Any]], apps: list[dict[str, Any]]) -> list[Probe]:
    """L1 verdicts from parsed SMI data: temperature, uncorrectable ECC, memory held by others."""
    out = []
    for g in gpus:
        t, ecc = g.get("temperature_c"), g.get("ecc_uncorrectable")
        hot = "not reported" if t is None else f"{t:g} C"
        out.append(Probe(1, f"gpu{g['gpu']}.temperature", t is None or t <= TEMP_LIMIT_C, hot))
        errors = "not reported" if ecc is None else f"{int(ecc)} uncorrectable"
        out.append(Probe(1, f"gpu{g['gpu']}.ecc", not ecc, errors))
    who = ", ".join(f"{a['name'] or '?'} (pid {a['pid']}, {a['mb']:.0f} MB)" for a in apps)
    said = (
        f"GPU memory in use by other processes: {who}"
        if apps
        else "no other process holds GPU memory"
    )
    out.append(Probe(1, "gpu.other_processes", not apps, said))
    return out


def device_nodes(vendor: str, dev: str = "/dev") -> Probe:
    """L0: the device nodes a container of this vendor's backend is given exist here."""
    if vendor == "amd":
        want, each = [f"{dev}/kfd"], f"{dev}/dri/renderD*"
    else:
        want, each = [f"{dev}/nvidiactl", f"{dev}/nvidia-uvm"], f"{dev}/nvidia[0-9]*"
    found = sorted(glob.glob(each))  # one per GPU
    missing = [p for p in want if not os.path.exists(p)] + ([] if found else [each])
    if missing:
        return Probe(0, "device_nodes", False, f"missing {', '.join(missing)}")
    return Probe(0, "device_nodes", True, ", ".join(want + found))


def driver_version(vendor: str) -> Probe:
    """L0: the driver (and ROCm runtime) version can be read."""
    said = functools.partial(Probe, 0, "driver_version")
    if vendor == "amd":
        for path in ("/sys/module/amdgpu/version", "/opt/rocm/.info/version"):
            try:
                with open(path) as fh:
                    text = fh.read().strip()
                if text:
                    return said(True, f"{path}: {text}")
            except OSError:
                continue
        done = proc.call(["amd-smi", "version"], timeout=30)
        if done.ok and done.stdout.strip():
            return said(True, done.stdout.strip().splitlines()[0][:200])
        return said(False, "amdgpu/ROCm version unreadable (sysfs, /opt/rocm/.info, amd-smi)")
    done = proc.call(
        ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], timeout=30
    )
    if done.ok and done.stdout.strip():
        return said(True, f"NVIDIA driver {done.stdout.split()[0]}")
    return said(False, f"nvidia-smi: {done.error or done.stderr.strip()[:200] or 'no output'}")


def smi_health(vendor: str) -> list[Probe]:
    """L1 on this machine: SMI temperature, ECC and other processes' memory."""
    if vendor == "amd":
        metric = proc.call(["amd-smi", "metric", "--json"], timeout=60)
        procs = proc.call(["amd-smi", "process", "--json"], timeout=60)
        if not metric.ok:
            why = metric.error or metric.stderr.strip()[:200]
            return [Probe(1, "smi", False, f"amd-smi metric: {why}")]
        return health(
            parse_amd_smi_metric(metric.stdout),
            parse_amd_smi_process(procs.stdout) if procs.ok else [],
        )
    csv_ = "--format=csv,noheader,nounits"
    q = proc.call(["nvidia-smi", f"--query-gpu={NVIDIA_HEALTH}", csv_], timeout=60)
    apps = proc.call(["nvidia-smi", f"--query-compute-apps={NVIDIA_APPS}", csv_], timeout=60)
    if not q.ok:
        return [Probe(1, "smi", False, f"nvidia-smi: {q.error or q.stderr.strip()[:200]}")]
    return health(parse_nvidia_health(q.stdout), parse_nvidia_apps(apps.stdout) if apps.ok else [])


def diagnostics(vendor: str) -> list[Probe]:
    """L1: ``dcgmi diag -r 1`` (NVIDIA) or ``rvs`` (ROCm) when installed; nothing otherwise."""
    import shutil

    if vendor == "nvidia" and shutil.which("dcgmi"):
        done = proc.call(["dcgmi", "diag", "-r", "1"], timeout=300)
        bad = parse_dcgmi_diag(done.stdout)
        said = "; ".join(f"{n}: {r}" for n, r in bad) or (done.error or "all passed")
        return [Probe(1, "dcgmi_diag_r1", done.ok and not bad, said)]
    rvs = shutil.which("rvs") or (
        "/opt/rocm/bin/rvs" if os.path.exists("/opt/rocm/bin/rvs") else None
    )
    if vendor == "amd" and rvs:
        confs = glob.glob("/opt/rocm*/share/rocm-validation-suite/conf/gpup_single.conf")
        done = proc.call([rvs] + (["-c", confs[0]] if confs else ["-g"]), timeout=300)
        failures = parse_rvs(done.stdout)
        said = "; ".join(failures[:5]) or (done.error or "no failure reported")
        return [Probe(1, "rvs", done.ok and not failures, said)]
    return []


def kernel_log(since: datetime | None, until: datetime | None) -> Probe:
    """L1: amdgpu / Xid errors in the kernel log within the window."""
    said = functools.partial(Probe, 1, "kernel_log")
    done = proc.call(["dmesg", "--time-format", "iso"], timeout=30)
    if not done.ok:
        done = proc.call(["journalctl", "-k", "-o", "short-iso", "--no-pager"], timeout=60)
    if not done.ok:
        why = done.error or done.stderr.strip()[:100]
        return said(True, f"kernel log not readable here ({why})")
    found = scan_kernel_log(done.stdout, since, until)
    return said(not found, "; ".join(found[:5]) or "no amdgpu/Xid errors in the window")
