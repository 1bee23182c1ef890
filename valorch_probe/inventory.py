"""Inventory gatherer: runs INSIDE the image, standard library only, Python >= 3.8.

Reads what an image holds without the network: /etc/os-release, the running
Python, every ``importlib.metadata`` distribution, the dpkg database, ROCm /
CUDA version files and headers, what PyTorch says it was built with, and the
``-v`` output of UCX / Open MPI / OFED tools. Every component records where
its value came from (``source``) and the file or argv that proves it
(``evidence``). Names are either headline components (``pytorch``, ``rocm``,
``hipblaslt`` ...) or package listings (``pip:<name>``, ``deb:<name>``).

Every path is read under ``root`` so that unit tests can point the gatherer
at a fixture tree. Facts about the machine rather than the image (GPUs seen
by rocminfo / nvidia-smi, the kernel) go to ``host_facts``, never to the
components. Usage: ``python3 -m valorch_probe.inventory [--root DIR]``.
"""

from __future__ import annotations

import glob
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from typing import Any, Dict, List, Optional

from . import MARKER, loaded_libs, tool_output
from .inventory_parse import (
    MAX_TEXT,
    bounded,
    component,
    ofed_version,
    parse_copyright_licenses,
    parse_dpkg_status,
    parse_header_version,
    parse_ofed_info,
    parse_ompi_info,
    parse_torch_config,
    parse_ucx_info,
    pip_license,
    split_rocm_version,
    upstream_version,
)

MAX_COMPONENTS = 20000
COMMAND_TIMEOUT = 20.0
TORCH_TIMEOUT = 180.0

# pip distribution (PEP 503 name) -> headline component
PIP_HEADLINE = {
    "torch": "pytorch",
    "torchvision": "torchvision",
    "torchaudio": "torchaudio",
    "tensorboard": "tensorboard",
    "apex": "apex",
    "tensorflow": "tensorflow",
    "tensorflow-rocm": "tensorflow",
    "tensorflow-cpu": "tensorflow",
    "triton": "triton",
    "pytorch-triton-rocm": "triton",
    "pytorch-triton": "triton",
    "numpy": "numpy",
    "jax": "jax",
    "jaxlib": "jaxlib",
    "onnxruntime": "onnxruntime",
    "onnxruntime-rocm": "onnxruntime",
    "onnxruntime-gpu": "onnxruntime",
    "deepspeed": "deepspeed",
    "transformers": "transformers",
}
# CUDA libraries shipped as wheels: the last resort after headers and dpkg
PIP_FALLBACK = {
    "cudnn": ["nvidia-cudnn-cu12", "nvidia-cudnn-cu11"],
    "nccl": ["nvidia-nccl-cu12", "nvidia-nccl-cu11"],
    "cuda": ["nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu11"],
    "cublas": ["nvidia-cublas-cu12", "nvidia-cublas-cu11"],
    "cufft": ["nvidia-cufft-cu12", "nvidia-cufft-cu11"],
    "cusparse": ["nvidia-cusparse-cu12", "nvidia-cusparse-cu11"],
    "cusolver": ["nvidia-cusolver-cu12", "nvidia-cusolver-cu11"],
    "curand": ["nvidia-curand-cu12", "nvidia-curand-cu11"],
    "nvrtc": ["nvidia-cuda-nvrtc-cu12", "nvidia-cuda-nvrtc-cu11"],
}

LOADABLE = frozenset(name for name, _, _ in loaded_libs.LIBRARIES)

# headline library, its header paths relative to a ROCm include dir (the first is
# <name>/<name>-version.h, then <name>-version.h), macro prefix, dpkg names
ROCM_HEADERS = [
    (
        "hip",
        ["hip/hip_version.h"],
        "hip",
        ["hip-runtime-amd", "hip-dev", "libamdhip64-6", "libamdhip64-5"],
    ),
    ("miopen", ["miopen/version.h"], "miopen", ["miopen-hip", "miopen-hip-dev", "libmiopen1"]),
    (
        "rocblas",
        ["rocblas/internal/rocblas-version.h", "rocblas-version.h", "rocblas/rocblas-version.h"],
        "rocblas",
        ["rocblas", "rocblas-dev", "librocblas4", "librocblas0"],
    ),
    ("hipblas", None, "hipblas", ["hipblas"]),
    (
        "hipblaslt",
        None,
        "hipblaslt",
        ["hipblaslt", "hipblaslt-dev", "libhipblaslt1", "libhipblaslt0"],
    ),
    ("hipfft", None, "hipfft", ["hipfft"]),
    ("hipsparse", None, "hipsparse", ["hipsparse"]),
    ("rocsolver", None, "rocsolver", ["rocsolver"]),
    ("rccl", ["rccl/rccl.h", "rccl.h"], "nccl", ["rccl", "rccl-dev", "librccl1"]),
]
# headline -> dpkg packages that stand for it when no better source exists
DEB_FALLBACK = {
    "rocm": ["rocm-core", "rocm-libs", "rocm-dev"],
    "magma": ["magma", "libmagma2", "libmagma-dev"],
    "ucx": ["ucx", "libucx0", "ucx-utils"],
    "ompi": ["openmpi-bin", "libopenmpi3", "libopenmpi40"],
    "ofed": ["mlnx-ofed-all", "mlnx-ofed-basic", "mlnx-ofed-kernel-utils"],
    "cudnn": ["libcudnn9-cuda-12", "libcudnn8", "libcudnn9"],
    "nccl": ["libnccl2"],
}
BIN_DIRS = [
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
    "/opt/ucx/bin",
    "/opt/ompi/bin",
    "/opt/openmpi/bin",
    "/usr/local/ucx/bin",
    "/usr/local/openmpi/bin",
    "/usr/mpi/gcc/openmpi*/bin",
    "/opt/rocm/bin",
]

_TORCH_SCRIPT = (
    r"""
import json, sys
out = {}
import torch
out["version"] = str(torch.__version__)
out["hip"] = getattr(torch.version, "hip", None)
out["cuda"] = getattr(torch.version, "cuda", None)
try:
    out["config"] = torch._C._show_config()
except Exception as exc:
    out["config_error"] = repr(exc)
try:
    out["nccl"] = ".".join(str(p) for p in torch.cuda.nccl.version())
except Exception:
    pass
"""
    + loaded_libs.SCRIPT
    + r"""
sys.stdout.write("@@TORCH@@" + json.dumps(out, default=str) + "\n")
"""
)


class Gatherer:
    def __init__(self, root: str = "/", commands: bool = True, torch: Optional[bool] = None):
        self.root = root
        self.commands = commands
        self.torch = (root in ("/", "")) if torch is None else torch
        self.components = {}  # type: Dict[str, Dict[str, Any]]
        self.host_facts = {}  # type: Dict[str, str]
        self.errors = []  # type: List[str]
        # what import torch mapped, once asked
        self.loaded = None  # type: Optional[Dict[str, Any]]
        # library -> why its installed file gave no version
        self.unanswered = {}  # type: Dict[str, str]

    def path(self, p: str) -> str:
        return os.path.join(self.root, p.lstrip("/"))

    def rel(self, p: str) -> str:
        """The in-image path of a path under root."""
        base = os.path.abspath(self.root)
        if base == "/":
            return p
        r = os.path.relpath(os.path.abspath(p), base)
        return "/" if r == "." else "/" + r

    def glob(self, pattern: str) -> List[str]:
        return [self.rel(p) for p in sorted(glob.glob(self.path(pattern)))]

    def read(self, p: str) -> Optional[str]:
        try:
            with open(self.path(p), errors="replace") as fh:
                return fh.read(4_000_000)
        except OSError:
            return None

    def add(self, comp: Dict[str, Any]) -> None:
        if (
            comp["value"]
            and comp["name"] not in self.components
            and len(self.components) < MAX_COMPONENTS
        ):
            self.components[comp["name"]] = comp

    def run(self, argv: List[str], timeout: float = COMMAND_TIMEOUT) -> Optional[str]:
        """stdout+stderr of a tool found on PATH (or the root's bin dirs); None if absent."""
        if not self.commands:
            return None
        if self.root in ("/", ""):
            search = os.environ.get("PATH", "").split(os.pathsep) + BIN_DIRS
        else:
            search = [self.path(d) for d in BIN_DIRS]
        dirs = [x for d in search for x in (sorted(glob.glob(d)) if "*" in d else [d])]
        exe = shutil.which(argv[0], path=os.pathsep.join(dirs))
        if exe is None:
            return None
        try:
            proc = subprocess.run(
                [exe, *argv[1:]],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            self.errors.append("%s: timed out after %ss" % (" ".join(argv), timeout))
            return None
        except OSError as exc:
            self.errors.append("%s: %s" % (" ".join(argv), exc))
            return None
        text = proc.stdout.decode("utf-8", "replace")
        if proc.returncode != 0 and not text.strip():
            self.errors.append("%s: exit status %d" % (" ".join(argv), proc.returncode))
        return text

    def os_release(self) -> None:
        text = self.read("/etc/os-release") or self.read("/usr/lib/os-release")
        if text is None:
            self.errors.append("/etc/os-release: not readable")
            return
        facts = {
            k: v.strip().strip("\"'")
            for k, v in (line.split("=", 1) for line in text.splitlines() if "=" in line)
        }
        os_id, version = facts.get("ID", ""), facts.get("VERSION_ID", "")
        names = {"pretty_name": facts.get("PRETTY_NAME"), "codename": facts.get("VERSION_CODENAME")}
        value = ("%s %s" % (os_id, version)).strip()
        self.add(component("os", value, "file", "/etc/os-release", names))
        if os_id == "debian":
            precise = (self.read("/etc/debian_version") or "").strip()
            # testing and unstable carry a name, not a number ("forky/sid"), and no VERSION_ID
            if re.match(r"^\d+(\.\d+)*$", precise) or (precise and not version):
                self.add(component("debian", precise, "file", "/etc/debian_version"))
        if os_id in ("ubuntu", "debian") and version:
            self.add(component(os_id, version, "file", "/etc/os-release"))

    def python(self) -> None:
        impl = {"implementation": platform.python_implementation()}
        self.add(component("python", platform.python_version(), "api", sys.executable, impl))

    def site_dirs(self) -> Optional[List[str]]:
        if self.root in ("/", ""):
            return None  # sys.path of the running interpreter
        dirs = []  # type: List[str]
        # the order of a Debian/Ubuntu sys.path: /usr/local shadows /usr/lib
        for pattern in (
            "opt/conda/lib/python3*/site-packages",
            "opt/venv/lib/python3*/site-packages",
            "usr/local/lib/python3*/*-packages",
            "usr/lib/python3.*/*-packages",
            "usr/lib/python3/dist-packages",
        ):
            dirs.extend(p for p in sorted(glob.glob(self.path(pattern))) if p not in dirs)
        return dirs

    def pip(self) -> None:
        from importlib import metadata  # Python 3.8+, as the probe

        dirs = self.site_dirs()
        dists = metadata.distributions() if dirs is None else metadata.distributions(path=dirs)
        seen = {}  # type: Dict[str, str]
        for dist in dists:
            try:
                name, version = dist.metadata["Name"], dist.version
            except Exception as exc:  # a broken .dist-info must not stop the audit
                self.errors.append("pip metadata: %s" % exc)
                continue
            if not name or not version:
                continue
            key = re.sub(r"[-_.]+", "-", name).lower()
            where = self.rel(str(getattr(dist, "_path", "") or dist.locate_file("")))
            if key in seen:
                continue  # shadowed by an earlier entry of sys.path, as import would be
            seen[key] = version
            try:
                lic = pip_license(dist.metadata)
            except Exception:
                lic = None
            self.add(component("pip:" + key, version, "pip", where, {"license": lic}))
            head = PIP_HEADLINE.get(key)
            if head:
                self.add(component(head, version, "pip", where, {"package": "pip:" + key}))

    def dpkg(self) -> None:
        texts = [("/var/lib/dpkg/status", self.read("/var/lib/dpkg/status"))]
        for status_d in self.glob("/var/lib/dpkg/status.d/*"):
            texts.append((status_d, self.read(status_d)))
        for where, text in texts:
            for pkg in parse_dpkg_status(text or ""):
                name, version = pkg["Package"], pkg.get("Version", "")
                notice = (self.read("/usr/share/doc/%s/copyright" % name) or "")[:65536]
                extra = {
                    "arch": pkg.get("Architecture"),
                    "source": pkg.get("Source"),
                    "license": ", ".join(parse_copyright_licenses(notice)),
                }
                split = split_rocm_version(version)
                if split:
                    extra.update(
                        upstream=split["library"],
                        rocm_build=split["rocm"],
                        package_build=split.get("build"),
                        distro=split.get("distro"),
                    )
                self.add(component("deb:" + name, version, "dpkg", where, extra))

    def rocm(self) -> None:
        roots = [
            r for r in ["/opt/rocm", *self.glob("/opt/rocm-*")[::-1]] if os.path.isdir(self.path(r))
        ]
        if not roots:
            return
        base = roots[0]
        info = (self.read(base + "/.info/version") or "").strip()
        header_path: str = ""
        header_version: Optional[str] = None
        for rel in ("include/rocm-core/rocm_version.h", "include/rocm_version.h"):
            text = self.read(base + "/" + rel)
            if text is not None:
                header_path, header_version = base + "/" + rel, parse_header_version(text, "rocm")
                break
        extra = {
            "installs": ", ".join(roots),
            "header": header_version,
            "real_path": self.rel(os.path.realpath(self.path(base))),
        }
        if info:
            extra["package_version"] = info
            self.add(component("rocm", info.split("-")[0], "file", base + "/.info/version", extra))
        elif header_version:
            self.add(component("rocm", header_version, "header", header_path, extra))
        for name, headers, prefix, _ in ROCM_HEADERS:
            headers = headers or ["%s/%s-version.h" % (name, name), name + "-version.h"]
            self.header(name, [base + "/include/" + rel for rel in headers], prefix)

    def header(self, name: str, paths: List[str], prefix: str) -> None:
        """``name``'s version from the first of ``paths`` whose version macros (``prefix``) say it."""
        for path in paths:
            text = self.read(path)
            version = parse_header_version(text, prefix) if text else None
            if version:
                self.add(component(name, version, "header", path))
                return

    def cuda(self) -> None:
        bases = ["/usr/local/cuda", *self.glob("/usr/local/cuda-*")[::-1]]
        for base in bases:
            text = self.read(base + "/version.json")
            if text:
                try:
                    version = json.loads(text)["cuda"]["version"]
                except (ValueError, KeyError, TypeError) as exc:
                    self.errors.append("%s/version.json: %s" % (base, exc))
                    continue
                self.add(component("cuda", version, "file", base + "/version.json"))
                break
            text = self.read(base + "/version.txt")
            m = re.search(r"CUDA Version\s+(\S+)", text or "")
            if m:
                self.add(component("cuda", m.group(1), "file", base + "/version.txt"))
                break
        incs = [
            "/usr/include",
            "/usr/include/x86_64-linux-gnu",
            "/usr/include/aarch64-linux-gnu",
            "/usr/local/cuda/include",
        ]
        magma = ["/opt/rocm/magma/include", "/usr/local/magma/include", "/opt/conda/include"]
        cudnn = ["cudnn_version.h", "cudnn_version_v9.h", "cudnn_version_v8.h", "cudnn.h"]
        self.header("cudnn", [d + "/" + f for d in incs for f in cudnn], "cudnn")
        self.header("nccl", [d + "/nccl.h" for d in incs], "nccl")
        self.header("magma", [d + "/magma_types.h" for d in incs + magma], "magma")

    def tools(self) -> None:
        for name, argvs, parse in (
            ("ucx", [["ucx_info", "-v"]], parse_ucx_info),
            ("ompi", [["ompi_info", "--parsable"], ["mpirun", "--version"]], parse_ompi_info),
            ("ofed", [["ofed_info", "-s"]], parse_ofed_info),
        ):
            for argv in argvs:
                text = self.run(argv)
                version = parse(text) if text else None
                if version:
                    self.add(component(name, version, "command", " ".join(argv)))
                    break

    def fallbacks(self) -> None:
        """Headline components that only the dpkg listing knows about."""
        table = [(n, ["deb:" + p for p in pkgs]) for n, _, _, pkgs in ROCM_HEADERS]
        for name in sorted(set(DEB_FALLBACK) | set(PIP_FALLBACK)):
            debs = ["deb:" + p for p in DEB_FALLBACK.get(name, [])]
            table.append((name, debs + ["pip:" + p for p in PIP_FALLBACK.get(name, [])]))
        for name, pkgs in table:
            for pkg in pkgs:
                found = self.components.get(pkg)
                if found is None:
                    continue
                extra = {"package": pkg, "package_version": found["value"]}
                split = split_rocm_version(found["value"])
                if split:
                    extra["rocm_build"] = split["rocm"]
                if name in self.components:  # a better source won; keep the package beside it
                    have = self.components[name].setdefault("extra", {})
                    for k, v in extra.items():
                        have.setdefault(k, bounded(v, MAX_TEXT))
                else:
                    value = found["value"]
                    if name in self.unanswered:
                        extra["loaded"] = self.unanswered[name]
                    elif self.loaded is not None and name in LOADABLE:
                        extra["loaded"] = "installed %s, not seen loaded" % value
                    if found["source"] == "dpkg":
                        value = ofed_version(value) if name == "ofed" else upstream_version(value)
                    self.add(component(name, value, found["source"], found["evidence"], extra))
                break

    def torch_build(self) -> None:
        if not self.torch or "pytorch" not in self.components:
            return
        facts = self.child("import torch", [_TORCH_SCRIPT], "@@TORCH@@")
        if not isinstance(facts, dict):
            return
        # What `import torch` loads: differs from the distribution when another copy shadows it.
        self.add(component("pytorch.runtime", facts.get("version"), "api", "torch.__version__"))
        for key in ("hip", "cuda"):
            if facts.get(key):
                self.add(component("pytorch." + key, facts[key], "api", "torch.version." + key))
        if facts.get("nccl"):
            name = "pytorch.built_with." + ("rccl" if facts.get("hip") else "nccl")
            self.add(component(name, facts["nccl"], "api", "torch.cuda.nccl.version()"))
        self.loaded_libraries(facts.get("loaded"))
        built = parse_torch_config(facts.get("config") or "")
        for lib, version in sorted((k, v) for k, v in built.items() if k != "torch"):
            name = "pytorch.built_with." + lib
            self.add(component(name, version, "api", "torch._C._show_config()"))

    def child(self, what: str, args: List[str], marker: str) -> Any:
        """The JSON a child Python prints behind ``marker`` (a library it loads may crash or
        hang only the child), or None with the reason in ``errors``."""
        try:
            proc = subprocess.run(
                [sys.executable, "-c", *args],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=TORCH_TIMEOUT,
            )
        except (subprocess.TimeoutExpired, OSError) as exc:
            self.errors.append("%s: %s" % (what, exc))
            return None
        out = proc.stdout.decode("utf-8", "replace")
        if marker not in out:
            said = bounded(proc.stderr.decode("utf-8", "replace")[-400:], 400)
            self.errors.append("%s: exit %d: %s" % (what, proc.returncode, said))
            return None
        return json.loads(out.split(marker, 1)[1].splitlines()[0])

    def installed_libraries(self) -> None:
        """The libraries no framework loaded, asked in the files the image installs (a child
        loads them: probe/loaded_libs.py); a call that gave no version is said beside the
        package version by ``fallbacks``."""
        if not self.torch:  # a fixture tree, or loading forbidden
            return
        have = self.loaded or {}
        ask = [list(lib) for lib in loaded_libs.LIBRARIES if lib[0] not in have]
        found = self.child(
            "library versions", [loaded_libs.INSTALLED_SCRIPT, json.dumps(ask)], "@@LIBS@@"
        )
        if not isinstance(found, dict):
            return
        for name, rec in found.items():
            if not isinstance(rec, dict):
                continue
            if loaded_libs.versions({name: rec}):
                self.loaded_libraries({name: rec}, keep=True)
            else:
                self.unanswered[name] = "%s() of %s gave no version%s" % (
                    loaded_libs.CALLS.get(str(rec.get("how")), rec.get("how")),
                    rec.get("path"),
                    (": " + bounded(str(rec["error"]), 300)) if rec.get("error") else "",
                )

    def loaded_libraries(self, loaded: Any, keep: bool = False) -> None:
        """Versions of the libraries ``import torch`` mapped, from each one's own version call
        (probe/loaded_libs.py): they win over headers and files, which stay beside them as
        what is installed; package metadata is added beside them by ``fallbacks``."""
        if not keep:
            self.loaded = loaded if isinstance(loaded, dict) else {}
        for name, found in sorted(loaded_libs.versions(loaded).items()):
            extra = {"loaded_from": found["path"]}
            before = self.components.pop(name, None)
            if before is not None:
                extra.update(installed=before["value"], installed_evidence=before["evidence"])
            self.add(component(name, found["version"], "api", found["evidence"], extra))

    def gpus(self) -> None:
        """Host facts: what GPU tools report is the machine's, not the image's."""
        self.host_facts["kernel"] = bounded(platform.release())
        text = self.run(["rocminfo"], timeout=30)
        if text:
            agents = sorted({a["gfx"] for a in tool_output.rocminfo_agents(text)})
            self.host_facts["rocminfo.gfx"] = bounded(
                ",".join(agents) or tool_output.last_words(text, 1)
            )
        text = self.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], timeout=30
        )
        if text:
            self.host_facts["nvidia-smi"] = bounded("; ".join(text.strip().splitlines()), MAX_TEXT)

    def imports(self) -> None:
        """Each framework package listed: does it import (probe/imports.py)?"""
        if self.torch:  # the image itself (not a fixture tree), and imports allowed
            from .imports import check_imports

            check_imports(self.components, self.errors, set(PIP_HEADLINE.values()))

    def gather(self) -> Dict[str, Any]:
        for step in (
            self.os_release,
            self.python,
            self.pip,
            self.dpkg,
            self.rocm,
            self.cuda,
            self.tools,
            self.torch_build,
            self.installed_libraries,
            self.fallbacks,
            self.imports,
            self.gpus,
        ):
            try:
                step()
            except Exception as exc:  # one broken source must not lose the others
                self.errors.append("%s: %s: %s" % (step.__name__, type(exc).__name__, exc))
        return {
            "type": "inventory",
            "components": list(self.components.values()),
            "host_facts": self.host_facts,
            "errors": [bounded(e, MAX_TEXT) for e in self.errors],
        }


def gather(root: str = "/", commands: bool = True, torch: Optional[bool] = None) -> Dict[str, Any]:
    """The inventory of the file system at ``root`` (the image itself by default)."""
    return Gatherer(root, commands, torch).gather()


def main(argv: Optional[List[str]] = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="valorch_probe inventory")
    parser.add_argument("--root", default="/", help="read files under this directory")
    parser.add_argument("--no-commands", action="store_true", help="run no tools (ucx_info ...)")
    parser.add_argument("--no-torch", action="store_true", help="do not import torch")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    inv = gather(args.root, not args.no_commands, False if args.no_torch else None)
    sys.stdout.write(MARKER + json.dumps(inv, sort_keys=True) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
