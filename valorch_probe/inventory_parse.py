"""Pure parsers of the inventory gatherer: version strings, dpkg status, headers,
tool output, PyTorch's build configuration. No I/O."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

MAX_VALUE = 200
MAX_TEXT = 500


def bounded(text: Any, limit: int = MAX_VALUE) -> str:
    text = "" if text is None else str(text).strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def component(
    name: str, value: Any, source: str, evidence: str, extra: Optional[Dict[str, Any]] = None
) -> Dict[str, Any]:
    comp = {
        "name": bounded(name),
        "value": bounded(value),
        "source": source,
        "evidence": bounded(evidence, MAX_TEXT),
    }  # type: Dict[str, Any]
    if extra:
        comp["extra"] = {
            bounded(k, 64): bounded(v, MAX_TEXT)
            for k, v in sorted(extra.items())
            if v not in (None, "")
        }
    return comp


_ROCM_SPLIT = re.compile(
    r"^(?:\d+:)?(?P<lib>\d+(?:\.\d+)*?)\.(?P<rocm>[1-9]\d{4,5})"
    r"(?:-(?P<build>[^~]+))?(?:~(?P<distro>.+))?$"
)


def split_rocm_version(version: str) -> Optional[Dict[str, str]]:
    """'0.10.0.60300-1~24.04' -> library 0.10.0, ROCm build 6.3.0, build 1, distro 24.04.

    ROCm packages append the ROCm release as MMmmpp (60300 = 6.3.0) to the
    library's own version. Returns None for any other version.
    """
    m = _ROCM_SPLIT.match((version or "").strip())
    if not m:
        return None
    n = int(m.group("rocm"))
    out = {"library": m.group("lib"), "rocm": "%d.%d.%d" % (n // 10000, n // 100 % 100, n % 100)}
    out.update((k, m.group(k)) for k in ("build", "distro") if m.group(k))
    return out


def upstream_version(version: str) -> str:
    """The upstream part of a Debian version: '1:4.1.4-3+b1' -> '4.1.4'."""
    split = split_rocm_version(version)
    if split:
        return split["library"]
    v = version.split(":", 1)[1] if re.match(r"^\d+:", version) else version
    return v.rsplit("-", 1)[0] if "-" in v else v


def ofed_version(version: str) -> str:
    """MLNX_OFED's Debian version '5.3-OFED.5.3.1.0.5.1' -> '5.3-1.0.5.1'."""
    m = re.match(r"^(\d+\.\d+)-OFED\.\1\.(\S+)$", version)
    return "%s-%s" % (m.group(1), m.group(2)) if m else upstream_version(version)


def parse_dpkg_status(text: str) -> List[Dict[str, str]]:
    """Installed packages of a dpkg status file (paragraphs of 'Key: value')."""
    out = []  # type: List[Dict[str, str]]
    for para in re.split(r"\n\s*\n", text):
        fields = {}  # type: Dict[str, str]
        key = None
        for line in para.splitlines():
            if line[:1] in (" ", "\t"):
                continue  # continuation of a multi-line field (Description, Conffiles)
            if ":" in line:
                key, value = line.split(":", 1)
                fields[key.strip()] = value.strip()
        status = fields.get("Status", "").split()
        if fields.get("Package") and status and status[-1] == "installed":
            out.append(fields)
    return out


def parse_copyright_licenses(text: str) -> List[str]:
    """The licence names of a machine-readable Debian copyright file (DEP-5: the 'License:'
    fields' first lines), in order, once each; [] for a free-form file."""
    if not re.match(r"\s*Format:\s*\S*copyright-format", text or "", re.I):
        return []
    names = (name.strip() for name in re.findall(r"^License:[ \t]*(\S[^\n]*)$", text, re.M))
    return [name for name in dict.fromkeys(names) if name and len(name) <= 100]


def pip_license(meta: Any) -> Optional[str]:
    """A distribution's licence from its metadata: License-Expression (PEP 639), a short
    License field, else the 'License ::' classifiers' last parts."""
    expr = (meta.get("License-Expression") or "").strip()
    if expr:
        return expr
    text = (meta.get("License") or "").strip()
    if text and "\n" not in text and len(text) <= 80 and text.upper() != "UNKNOWN":
        return text
    classifiers = [[p.strip() for p in c.split("::")] for c in meta.get_all("Classifier") or []]
    found = [p[-1] for p in classifiers if p[0] == "License" and len(p) > 1]
    return ", ".join(n for n in dict.fromkeys(found) if n not in ("OSI Approved", "")) or None


def parse_header_version(text: str, prefix: str) -> Optional[str]:
    """'MAJOR.MINOR.PATCH' from #define macros named like PREFIX_VERSION_MAJOR,
    prefixVersionMajor, PREFIX_MAJOR, PREFIX_MAJOR_VERSION (hipTensor) or
    PREFIX_VERSION_MICRO/PATCHLEVEL."""
    defines = {}  # type: Dict[str, str]
    for name, value in re.findall(
        r"^\s*#\s*define\s+(\w+)\s+\(?(\d+)\)?\s*(?://.*|/\*.*)?$", text, re.M
    ):
        defines.setdefault(name.lower().replace("_", ""), value)
    prefix = prefix.lower()
    parts = []
    for words in (("major",), ("minor",), ("patch", "micro", "patchlevel")):
        keys = [
            k for w in words for k in (prefix + "version" + w, prefix + w, prefix + w + "version")
        ]
        found = next((defines[k] for k in keys if k in defines), None)
        if found is None:
            break
        parts.append(str(int(found)))
    return ".".join(parts) if len(parts) >= 2 else None


def cudnn_style(printed: str) -> str:
    """The cuDNN version ``torch.__config__.show()`` prints, decoded as its encoding says:
    PyTorch prints cudnnGetVersion() as ``v / 1000 . v / 100 % 10 [. v % 100]``
    (aten/src/ATen/cuda/detail/CUDAHooks.cpp, printCudnnStyleVersion), cuDNN 8's encoding,
    so cuDNN 9's 90100 reads "90.1": rebuilt, then decoded 10000-based from cuDNN 9 on."""
    parts = [int(p) for p in printed.split(".")[:3]] + [0, 0]
    v = 1000 * parts[0] + 100 * parts[1] + parts[2]
    base = 10000 if v >= 90000 else 1000
    return "%d.%d.%d" % (v // base, v % base // 100, v % 100)


def parse_torch_config(text: str) -> Dict[str, str]:
    """Compiled-against versions from ``torch._C._show_config()`` (cuDNN's decoded: cudnn_style)."""
    found = {}  # type: Dict[str, str]
    names = {"hip runtime": "hip", "cuda runtime": "cuda"}
    names.update((n, n) for n in ("miopen", "cudnn", "magma", "rocm", "nccl"))
    for line in text.splitlines():
        m = re.match(r"^\s*-\s*([A-Za-z][A-Za-z ]*?)\s+v?(\d+(?:\.\d+)+)", line)
        if m and m.group(1).lower() in names:
            name = names[m.group(1).lower()]
            found.setdefault(name, cudnn_style(m.group(2)) if name == "cudnn" else m.group(2))
        if "Build settings:" in line:
            for key, value in re.findall(r"(\w+)=([^,]*)", line):
                if key in ("CUDA_VERSION", "CUDNN_VERSION", "TORCH_VERSION") and value.strip():
                    found.setdefault(key.split("_")[0].lower(), value.strip())
    return found


def parse_ucx_info(text: str) -> Optional[str]:
    m = re.search(r"(?:version\s*[=:]|Version)\s*(\d+(?:\.\d+)+)", text)
    return m.group(1) if m else None


def parse_ompi_info(text: str) -> Optional[str]:
    m = re.search(r"^ompi:version:full:(\S+)", text, re.M) or re.search(
        r"\(Open MPI\)\s+(\d+(?:\.\d+)+\S*)", text
    )
    return m.group(1) if m else None


def parse_ofed_info(text: str) -> Optional[str]:
    m = re.search(r"(?:MLNX_OFED_LINUX|OFED|MLNX_OFED)-(\S+?):?\s*$", text.strip(), re.M)
    return m.group(1) if m else (bounded(text.splitlines()[0]) if text.strip() else None)
