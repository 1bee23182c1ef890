"""Versions of the GPU libraries, asked through each library's own version call and decoded
the way that library documents its encoding: first the shared objects a framework actually
loaded (mapped into the process after ``import torch``, /proc/self/maps), then, for those it
did not load (no torch, a CPU build), the files the image installs in the system's library
directories (Debian's /usr/lib/<triplet> as well as /opt/rocm*/lib), loaded by a child
process of the probe.

``SCRIPT`` runs inside the image (appended to the inventory's torch script) and reports raw
answers with the path; ``INSTALLED_SCRIPT`` asks the installed files alone; ``decode`` turns
the answers into versions here, so that every encoding is tested
(tests/unit/test_loaded_libs.py) against real captures (tests/fixtures/cuda-wheel/,
tests/fixtures/rocm-userspace/).

The encodings, from each library's header:
- CUDA runtime ``cudaRuntimeGetVersion``: CUDART_VERSION = 1000*major + 10*minor (12040 = 12.4).
- cuDNN ``cudnnGetVersion``: CUDNN_VERSION = 10000*major + 100*minor + patch from cuDNN 9
  (cudnn_version.h: 90100 = 9.1.0); 1000*major + 100*minor + patch before (8907 = 8.9.7).
- NCCL/RCCL ``ncclGetVersion``: NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z, except
  X*1000 + Y*100 + Z while X <= 2 and Y <= 8 (nccl.h: 22105 = 2.21.5, 2804 = 2.8.4).
- cuBLAS, cuFFT, cuSPARSE, cuSOLVER, cuRAND ``*GetProperty(MAJOR_VERSION=0 / MINOR_VERSION=1 /
  PATCH_LEVEL=2)``: three plain integers (library_types.h, libraryPropertyType).
- cuBLASLt ``cublasLtGetVersion``: CUBLASLT_VERSION = 10000*major + 100*minor + patch.
- NVRTC ``nvrtcVersion(&major, &minor)``: two integers.
- HIP ``hipRuntimeGetVersion``: HIP_VERSION = 10000000*major + 100000*minor + patch
  (hip_version.h: 60241134 = 6.2.41134).
- MIOpen ``miopenGetVersion(&major, &minor, &patch)``: three integers.
- rocBLAS ``rocblas_get_version_string(buf, size)``: "MAJOR.MINOR.PATCH.TWEAK-COMMIT"
  (rocblas-functions.h); the version is its first three numbers.
- hipBLASLt ``hipblasLtGetVersion(handle, &v)``: major*100000 + minor*100 + patch
  (library/src/amd_detail/hipblaslt.cpp). The handle is only tested for NULL, never read, so
  a non-NULL placeholder asks without creating one (which needs a GPU).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, Optional

# inventory component -> (file name stem of the shared object, how its version is asked)
LIBRARIES = (
    ("cuda", "libcudart.so", "cudart"),
    ("cudnn", "libcudnn.so", "cudnn"),
    ("nccl", "libnccl.so", "nccl"),
    ("cublas", "libcublas.so", "prop:cublasGetProperty"),
    ("cublaslt", "libcublasLt.so", "cublaslt"),
    ("cufft", "libcufft.so", "prop:cufftGetProperty"),
    ("cusparse", "libcusparse.so", "prop:cusparseGetProperty"),
    ("cusolver", "libcusolver.so", "prop:cusolverGetProperty"),
    ("curand", "libcurand.so", "prop:curandGetProperty"),
    ("nvrtc", "libnvrtc.so", "nvrtc"),
    ("hip", "libamdhip64.so", "hip"),
    ("miopen", "libMIOpen.so", "miopen"),
    ("rccl", "librccl.so", "nccl"),
    ("rocblas", "librocblas.so", "rocblas"),
    ("hipblaslt", "libhipblaslt.so", "hipblaslt"),
)

# where an image installs them: Debian's multiarch directories, ROCm's and CUDA's trees
LIB_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/opt/rocm/lib",
    "/opt/rocm-*/lib",
    "/usr/local/cuda/lib64",
)

CALLS = {
    "cudart": "cudaRuntimeGetVersion",
    "cudnn": "cudnnGetVersion",
    "nccl": "ncclGetVersion",
    "cublaslt": "cublasLtGetVersion",
    "nvrtc": "nvrtcVersion",
    "hip": "hipRuntimeGetVersion",
    "miopen": "miopenGetVersion",
    "rocblas": "rocblas_get_version_string",
    "hipblaslt": "hipblasLtGetVersion",
}

# Defines ``_ask(libraries, paths)``: each library's raw answer from the first path that is it.
_ASK = r"""
def _ask(libraries, paths, by):
    import ctypes, os
    found = {}
    for name, stem, how in libraries:
        mine = [p for p in paths if os.path.basename(p) == stem or os.path.basename(p).startswith(stem + ".")]
        if not mine:
            continue
        rec = {"path": mine[0], "how": how, "by": by}
        found[name] = rec
        try:
            lib = ctypes.CDLL(mine[0])
            c_int, ref = ctypes.c_int, ctypes.byref
            if how.startswith("prop:"):
                fn, vals = getattr(lib, how[5:]), []
                for kind in (0, 1, 2):
                    v = c_int(-1)
                    fn(kind, ref(v))
                    vals.append(v.value)
                rec["raw"] = vals
            elif how in ("cudnn", "cublaslt"):
                fn = getattr(lib, "cudnnGetVersion" if how == "cudnn" else "cublasLtGetVersion")
                fn.restype = ctypes.c_size_t
                rec["raw"] = [int(fn())]
            elif how == "nvrtc":
                a, b = c_int(-1), c_int(-1)
                lib.nvrtcVersion(ref(a), ref(b))
                rec["raw"] = [a.value, b.value]
            elif how == "miopen":
                a, b, c = ctypes.c_size_t(), ctypes.c_size_t(), ctypes.c_size_t()
                lib.miopenGetVersion(ref(a), ref(b), ref(c))
                rec["raw"] = [a.value, b.value, c.value]
            elif how == "rocblas":
                buf = ctypes.create_string_buffer(256)
                status = lib.rocblas_get_version_string(buf, ctypes.c_size_t(256))
                rec["raw"] = [buf.value.decode("ascii", "replace")] if status == 0 else [-1]
            elif how == "hipblaslt":
                v, placeholder = c_int(-1), ctypes.create_string_buffer(64)
                status = lib.hipblasLtGetVersion(ctypes.cast(placeholder, ctypes.c_void_p), ref(v))
                rec["raw"] = [v.value] if status == 0 else [-1]
            else:
                v = c_int(-1)
                fn = {"cudart": "cudaRuntimeGetVersion", "nccl": "ncclGetVersion", "hip": "hipRuntimeGetVersion"}[how]
                status = getattr(lib, fn)(ref(v))
                rec["raw"] = [v.value] if status == 0 else [-1]
        except Exception as exc:
            rec["error"] = "%s: %s" % (type(exc).__name__, exc)
    return found
"""

# Runs inside the image after ``import torch``; fills ``out["loaded"]`` with raw answers.
SCRIPT = (
    _ASK
    + r"""
try:
    with open("/proc/self/maps") as fh:
        _maps = sorted(set(l.split()[-1] for l in fh if "/" in l))
    out["loaded"] = _ask(@LIBRARIES@, _maps, "torch")
except Exception as exc:
    out["loaded_error"] = repr(exc)
""".replace("@LIBRARIES@", repr(LIBRARIES))
)

# Runs in a child of the inventory: argv[1] is a JSON list of [name, stem, how] to ask, read
# from the installed files; prints one marked line (a library may crash only this child).
INSTALLED_SCRIPT = (
    _ASK
    + r"""
import glob, json, sys
_libs = json.loads(sys.argv[1])
_paths = []
for _d in @DIRS@:
    for _dir in sorted(glob.glob(_d), reverse=True):
        _paths.extend(sorted(glob.glob(_dir + "/lib*.so*"), reverse=True))
sys.stdout.write("@@LIBS@@" + json.dumps(_ask(_libs, _paths, "probe")) + "\n")
""".replace("@DIRS@", repr(LIB_DIRS))
)


def _three(v: int, major_unit: int) -> str:
    return "%d.%d.%d" % (v // major_unit, (v % major_unit) // 100, v % 100)


# the calls that answer one positive integer, decoded as the headers above say
_ONE_INT: Dict[str, Callable[[int], str]] = {
    "cudart": lambda v: "%d.%d" % (v // 1000, (v % 1000) // 10),
    "cudnn": lambda v: _three(v, 10000 if v >= 90000 else 1000),
    "nccl": lambda v: _three(v, 10000 if v >= 20900 else 1000),
    "hip": lambda v: "%d.%d.%d" % (v // 10000000, (v % 10000000) // 100000, v % 100000),
}


def decode(how: str, raw: Any) -> Optional[str]:
    """The version a library's own call answered, or None when the answer is unusable
    (the call failed: negative or missing values)."""
    if how == "rocblas" and isinstance(raw, list) and raw and isinstance(raw[0], str):
        m = re.match(r"(\d+)\.(\d+)\.(\d+)", raw[0])
        return "%s.%s.%s" % m.groups() if m else None
    if not isinstance(raw, list) or not raw or not all(isinstance(x, int) for x in raw):
        return None
    if any(x < 0 for x in raw):
        return None
    if how.startswith("prop:") or how == "miopen":
        return ".".join(str(x) for x in raw[:3]) if len(raw) >= 3 else None
    if how == "nvrtc":
        return "%d.%d" % (raw[0], raw[1]) if len(raw) >= 2 else None
    if how == "cublaslt":
        return _three(raw[0], 10000)
    if how == "hipblaslt":
        return _three(raw[0], 100000)
    return _ONE_INT[how](raw[0]) if how in _ONE_INT and raw[0] > 0 else None


def evidence(name: str, rec: Dict[str, Any]) -> str:
    how = str(rec.get("how", ""))
    call = how[5:] if how.startswith("prop:") else CALLS.get(how, how)
    how_found = (
        "loaded by the probe: no framework mapped it"
        if rec.get("by") == "probe"
        else "mapped after import torch"
    )
    return "%s() of %s (%s)" % (call, rec.get("path"), how_found)


def versions(loaded: Any) -> Dict[str, Dict[str, str]]:
    """name -> {"version", "evidence", "path"} for every library whose call answered."""
    out = {}  # type: Dict[str, Dict[str, str]]
    if not isinstance(loaded, dict):
        return out
    for name, rec in sorted(loaded.items()):
        if not isinstance(rec, dict):
            continue
        version = decode(str(rec.get("how", "")), rec.get("raw"))
        if version:
            out[str(name)] = {
                "version": version,
                "evidence": evidence(str(name), rec),
                "path": str(rec.get("path", "")),
            }
    return out
