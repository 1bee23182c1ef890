"""Parsing what external profilers and SMI tools print (pure, standard library):
kernel and range names from rocprofv3 / rocprof CSV files, nsys stats and ncu
CSV; device fields from rocminfo, rocm-smi / amd-smi JSON, nvidia-smi CSV and nvidia-smi -q -x.

Unit-tested on recorded output formats (tests/fixtures/tools/); the tools
themselves only run on GPU hosts."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
from typing import Any, Dict, Iterable, List, Optional

NAME_COLUMNS = ("Kernel_Name", "KernelName", "Kernel Name", "Name", "Range", "Function", "Message")


def _rows(text: str, first: Optional[str] = None) -> List[Dict[str, str]]:
    """CSV rows; with ``first``, the table starts at the first line that begins with it
    (tools print banners before their CSV)."""
    lines = (text or "").splitlines()
    if first is not None:
        start = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith(first)), None)
        if start is None:
            return []
        lines = lines[start:]
    with contextlib.suppress(csv.Error):
        return list(csv.DictReader(io.StringIO("\n".join(lines))))
    return []


def names_in_csv(text: str, first: Optional[str] = None) -> List[str]:
    """Kernel (or range) names of a CSV report (each row's first named column), in order,
    without repeats."""
    cells = (((row.get(col) or "").strip() for col in NAME_COLUMNS) for row in _rows(text, first))
    return [v for v in dict.fromkeys(next((v for v in row if v), "") for row in cells) if v]


def rocprof_names(files: Dict[str, str]) -> List[str]:
    """Kernel and marker names of every CSV a rocprofv3 (``*_kernel_trace.csv``,
    ``*_kernel_stats.csv``, ``*_marker_api_trace.csv``) or rocprof (``results.csv``,
    ``results.stats.csv``) run wrote; ``files`` maps a path to its text."""
    csvs = [files[path] for path in sorted(files) if path.endswith(".csv")]
    return list(dict.fromkeys(name for text in csvs for name in names_in_csv(text)))


def nsys_names(text: str) -> List[str]:
    """Names of an ``nsys stats --format csv`` report (cuda_gpu_kern_sum: "Name";
    nvtx_sum: "Range")."""
    return names_in_csv(text, first='"Time') or names_in_csv(text, first="Time")


def ncu_names(text: str) -> List[str]:
    """Kernel names of ``ncu --csv`` (the table starts at the "ID" header, after ==PROF== lines)."""
    return names_in_csv(text, first='"ID"')


def matching(names: Iterable[str], pattern: str) -> List[str]:
    rx = re.compile(pattern)
    return [n for n in names if rx.search(n)]


def _json(text: str) -> Any:
    """The JSON document in a tool's output: warnings may precede it (amd-smi under a newer Python
    prints SyntaxWarnings first, and the probe reads stderr with stdout) and text may follow it;
    the first line that opens a document which parses is taken."""
    text = text or ""
    decoder = json.JSONDecoder()
    for m in re.finditer(r"^[ \t]*([\[{])", text, re.M):
        with contextlib.suppress(ValueError):
            return decoder.raw_decode(text[m.start(1) :])[0]
    return None


def rocminfo_agents(text: str) -> List[Dict[str, str]]:
    """``rocminfo``: one dict per GPU agent (an agent whose ``Name:`` is a gfx target), with its
    ``Marketing Name:``; CPU agents and a rocminfo that found no driver give none."""
    agents = []
    for block in re.split(r"^\*{5,}\s*$", text or "", flags=re.M):
        gfx = re.search(r"^\s*Name:\s+(gfx[0-9a-f]+)\s*$", block, re.M)
        if gfx:
            name = re.search(r"^\s*Marketing Name:\s+(.*?)\s*$", block, re.M)
            agents.append({"name": name.group(1) if name else "", "gfx": gfx.group(1)})
    return agents


def last_words(text: str, lines: int = 3, limit: int = 400) -> str:
    """A tool's own last words: its last non-empty lines, joined, capped (the reason a row
    quotes when the tool could not do its job)."""
    plain = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text or "")  # rocminfo colours its error
    said = [ln.strip() for ln in plain.splitlines() if ln.strip()][-lines:]
    out = " | ".join(said) or "nothing"
    return out if len(out) <= limit else out[: limit - 1] + "…"


def rocm_smi_cards(text: str) -> List[Dict[str, str]]:
    """``rocm-smi --showproductname --json``: one dict per card with name and gfx."""
    doc = _json(text)
    cards = []
    if isinstance(doc, dict):
        for key in sorted(doc, key=lambda k: (len(k), k)):
            if not key.lower().startswith("card") or not isinstance(doc[key], dict):
                continue
            low = {k.lower(): str(v) for k, v in doc[key].items()}
            name = low.get("card series") or low.get("device name") or ""
            cards.append({"card": key, "name": name, "gfx": low.get("gfx version", "")})
    return cards


def amd_smi_gpus(text: str) -> List[Dict[str, str]]:
    """``amd-smi static --asic --json``: a list (ROCm 6.0-6.2) or {"gpu_data": [...]}."""
    doc = _json(text)
    if isinstance(doc, dict):
        doc = doc.get("gpu_data") or doc.get("gpus") or []
    gpus = []
    for item in doc if isinstance(doc, list) else []:
        asic = item.get("asic", {}) if isinstance(item, dict) else {}
        if isinstance(asic, dict):
            name, gfx = asic.get("market_name", ""), asic.get("target_graphics_version", "")
            gpus.append({"gpu": str(item.get("gpu", "")), "name": str(name), "gfx": str(gfx)})
    return gpus


def nvidia_smi_gpus(text: str) -> List[Dict[str, str]]:
    """``nvidia-smi --query-gpu=index,name,compute_cap,driver_version --format=csv``: one dict
    per GPU. With a header row the columns are read by name (any order, as nvidia-smi prints
    the fields in the order they were asked for); without one, in the order above."""
    fields = ["index", "name", "compute_cap", "driver"]
    gpus: List[Dict[str, str]] = []
    for row in csv.reader(io.StringIO(text or "")):
        cells = [c.strip() for c in row]
        names = [c.split(" [")[0].strip().lower() for c in cells]
        if "compute_cap" in names and "name" in names:  # the header: "compute_cap, ..., index"
            fields = [{"driver_version": "driver"}.get(n, n) for n in names]
            continue
        if len(cells) < len(fields):
            continue
        gpu = dict(zip(fields, cells))
        index = gpu.get("index", str(len(gpus)))  # a query without index: the rows' order
        if index.isdigit() and re.match(r"\d+\.\d+$", gpu.get("compute_cap") or ""):
            cap, name, driver = gpu["compute_cap"], gpu.get("name", ""), gpu.get("driver", "")
            gpus.append({"index": index, "name": name, "compute_cap": cap, "driver": driver})
    return gpus


def gfx_spellings(arch: str) -> List[str]:
    """A gfx arch as tools spell it: rocm-smi prints the stepping in decimal
    (gfx90a is "gfx9010"), amd-smi sometimes upper-case ("GFX940")."""
    arch = (arch or "").split(":")[0].lower()
    out = [arch]
    m = re.match(r"gfx(\d+)(\d)([0-9a-f])$", arch)
    if m and m.group(3) in "abcdef":
        out.append("gfx%s%s%d" % (m.group(1), m.group(2), int(m.group(3), 16)))
    return out


def same_gfx(reported: str, arch: str) -> bool:
    return (reported or "").split(":")[0].lower() in gfx_spellings(arch)


def sm_of(compute_cap: str) -> str:
    """'9.0' -> 'sm_90'."""
    m = re.match(r"\s*(\d+)\.(\d+)", compute_cap or "")
    return "sm_%s%s" % (m.group(1), m.group(2)) if m else ""


def nvidia_smi_xml(text: str) -> Dict[str, Any]:
    """``nvidia-smi -q -x``: the driver's version, the newest CUDA version it supports
    (``cuda_version``) and per GPU its name, PCI bus id and current MIG mode. Persistence
    mode and the telemetry are not read: no verdict depends on them. xml.etree reads no DTD (the document names ``nvsmi_device_v*.dtd``) and
    resolves no external entity; at most 4 MiB is parsed. {} when it is not such a document."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring((text or "")[: 4 << 20])
    except ET.ParseError:
        return {}
    if root.tag != "nvidia_smi_log":
        return {}

    def field(node: Any, path: str) -> str:
        found = node.find(path)
        return (found.text or "").strip() if found is not None else ""

    gpus = [
        {
            "name": field(g, "product_name"),
            "mig": field(g, "mig_mode/current_mig"),
            "bus_id": g.get("id", ""),
        }
        for g in root.findall("gpu")
    ]
    return {
        "driver_version": field(root, "driver_version"),
        "cuda_version": field(root, "cuda_version"),
        "gpus": gpus,
    }
