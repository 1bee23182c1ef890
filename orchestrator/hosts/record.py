"""``valorch hosts probe --record DIR``: write down, from this machine, everything valorch
parses about GPUs, so that a real GPU becomes regression fixtures (hosts/record_fixtures.py).

Recorded (each file scrubbed, hosts/scrub.py): the SMI tools' outputs (the exact argv the
probe and the host detection run), the KFD topology, the device properties as torch reports
them, the probe's raw result lines of the smoke suite (and, with a GPU, the kernels suite)
and the kernel names the profiler saw per kernel check. What could not be recorded is
written down too, with the reason: on a host without a GPU the record is the evidence of
that ("no GPU: ...") and the CPU facts.
"""

from __future__ import annotations

import json
import platform
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import outfile, proc
from ..executors.probe_local import raw_result_lines
from .detect import KFD_NODES, NVIDIA_QUERY
from .scrub import scrub

#: file under smi/ -> the command line that printed it (the probe's and the host detection's
#: queries; no argument holds a space)
SMI_COMMANDS: dict[str, list[str]] = {
    rel: line.split()
    for rel, line in {
        "nvidia-smi-query-gpu.csv": "nvidia-smi --query-gpu=index,name,compute_cap,driver_version --format=csv",
        "nvidia-smi-query-host.csv": f"nvidia-smi --query-gpu={NVIDIA_QUERY} --format=csv,noheader,nounits",
        "nvidia-smi-q.xml": "nvidia-smi -q -x",
        "rocm-smi-showproductname.json": "rocm-smi --showproductname --json",
        "amd-smi-static-asic.json": "amd-smi static --asic --json",
    }.items()
}
#: what torch reports about the build and each device (standard library + torch only)
TORCH_FACTS = r"""
import json
out = {}
try:
    import torch
except Exception as exc:
    out["error"] = "%s: %s" % (type(exc).__name__, exc)
else:
    out.update(torch=torch.__version__, hip=getattr(torch.version, "hip", None),
               cuda=getattr(torch.version, "cuda", None), available=bool(torch.cuda.is_available()))
    try:
        out["arch_list"] = list(torch.cuda.get_arch_list())
    except Exception as exc:
        out["arch_list_error"] = str(exc)
    devices = []
    for i in range(torch.cuda.device_count() if out["available"] else 0):
        p = torch.cuda.get_device_properties(i)
        devices.append({"index": i, "name": p.name, "major": p.major, "minor": p.minor,
                        "gcnArchName": getattr(p, "gcnArchName", None), "total_memory": p.total_memory,
                        "multi_processor_count": p.multi_processor_count, "repr": repr(p)})
    out["devices"] = devices
print(json.dumps(out, sort_keys=True))
"""


#: writes a recorded file (``rel`` under the record) scrubbed, counting what was scrubbed
Put = Callable[[str, str], None]


def _kfd(put: Put, nodes: Path) -> list[str]:
    written: list[str] = []
    for node in sorted(nodes.iterdir() if nodes.is_dir() else (), key=lambda p: p.name):
        for name in ("properties", "gpu_id", "name"):
            try:
                text = (node / name).read_text()
            except OSError:
                continue
            rel = f"kfd/nodes/{node.name}/{name}"
            put(rel, text)
            written.append(rel)
    return written


def _probe(
    put: Put, python: str, probe_dir: Path, env: dict[str, str], suites: list[str]
) -> dict[str, Any]:
    """The probe's raw result lines per suite, and the kernel names each result's evidence named."""
    run = raw_result_lines(python, probe_dir, env, suites)
    lines = list(run.lines)
    kernels: list[str] = []
    for line in lines:
        rec = json.loads(line)
        names = str((rec.get("metrics") or {}).get("kernels") or "")
        if rec.get("type") == "result" and names:
            kernels += [f"{rec['check']}\t{k}" for k in names.split(";") if k]
    put("probe/results.jsonl", "\n".join(lines) + "\n")
    head = "# check\tkernel name (as the profiler recorded it)\n"
    put("probe/kernel-names.tsv", head + "\n".join(kernels) + ("\n" if kernels else ""))
    return {
        "suites": suites,
        "results": sum(1 for ln in lines if '"type": "result"' in ln),
        "kernel_names": len(kernels),
        "problems": list(run.problems),
    }


def collect(dest: Path, python: str, probe_dir: Path, env: dict[str, str]) -> dict[str, Any]:
    """Record this machine into ``dest`` (the smoke suite, and with a GPU the kernels suite);
    returns the manifest (also written as manifest.json)."""
    dest.mkdir(parents=True, exist_ok=True)
    hostnames = sorted(
        {socket.gethostname(), socket.getfqdn(), platform.node()} - {"localhost", ""}
    )
    counts: dict[str, int] = {}

    def put(rel: str, text: str) -> None:
        clean, counts[rel] = scrub(text, hostnames)
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        outfile.write(path, clean.encode("utf-8"))

    smi: dict[str, str] = {}
    for rel, argv in SMI_COMMANDS.items():
        done = proc.call(argv, timeout=60, env=env)
        if done.ok:
            put(f"smi/{rel}", done.stdout)
            smi[rel] = "recorded: " + " ".join(argv)
        else:
            smi[rel] = "not recorded: %s" % (
                done.error or "exit %s: %s" % (done.returncode, (done.stderr or done.stdout)[-200:])
            )
    kfd = _kfd(put, KFD_NODES)
    facts_run = proc.call([python, "-c", TORCH_FACTS], timeout=300, env=env)
    if facts_run.ok:
        torch_facts: dict[str, Any] = json.loads(facts_run.stdout.strip().splitlines()[-1])
    else:
        torch_facts = {"error": facts_run.error or facts_run.stderr[-300:]}
    put("torch/device-properties.json", json.dumps(torch_facts, indent=1, sort_keys=True) + "\n")
    gpu = (
        bool(torch_facts.get("available"))
        or bool(kfd and any("gpu_id" in k for k in kfd))
        or any(v.startswith("recorded") for k, v in smi.items() if k.startswith("nvidia"))
    )
    run = ["smoke"] + (["kernels"] if torch_facts.get("available") else [])
    probe = _probe(put, python, probe_dir, env, run)
    evidence = []
    if not torch_facts.get("available"):
        evidence.append(
            "torch.cuda.is_available() is False"
            if "available" in torch_facts
            else "torch not importable: %s" % torch_facts.get("error", "?")[:200]
        )
    if not kfd:
        evidence.append(f"no KFD topology at {KFD_NODES}")
    evidence += [f"{k}: {v}" for k, v in smi.items() if not v.startswith("recorded")]
    manifest = {
        "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": platform.machine(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "cpu": _cpu_model(),
        "gpu": gpu,
        "no_gpu_evidence": [] if gpu else evidence,
        "smi": smi,
        "kfd_files": len(kfd),
        "torch": {k: torch_facts.get(k) for k in ("torch", "hip", "cuda", "available")},
        "probe": probe,
        "scrubbed": {k: v for k, v in sorted(counts.items()) if v},
    }
    outfile.write(
        dest / "manifest.json",
        (scrub(json.dumps(manifest, indent=1, sort_keys=True), hostnames)[0] + "\n").encode(),
    )
    return manifest


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"
