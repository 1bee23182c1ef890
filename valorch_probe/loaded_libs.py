"""Versions of the GPU libraries a framework actually loaded: the shared objects mapped into
the process after ``import torch`` (/proc/self/maps), asked through each library's own
version call, each decoded the way that library documents its encoding. Standard library
only, Python >= 3.8.

``SCRIPT`` runs inside the image (appended to the inventory's torch script) and reports raw
integers with the mapped path; ``decode`` turns them into versions here, so that every
encoding is tested (tests/unit/test_loaded_libs.py) against real captures
(tests/fixtures/cuda-wheel/).

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
"""

from __future__ import annotations

from typing import Any, Dict, Optional

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
)

CALLS = {
    "cudart": "cudaRuntimeGetVersion",
    "cudnn": "cudnnGetVersion",
    "nccl": "ncclGetVersion",
    "cublaslt": "cublasLtGetVersion",
    "nvrtc": "nvrtcVersion",
    "hip": "hipRuntimeGetVersion",
    "miopen": "miopenGetVersion",
}

# Runs inside the image after ``import torch``; fills ``out["loaded"]`` with raw answers.
SCRIPT = r"""
def _loaded(libraries):
    import ctypes, os
    with open("/proc/self/maps") as fh:
        maps = sorted(set(l.split()[-1] for l in fh if "/" in l))
    found = {}
    for name, stem, how in libraries:
        paths = [p for p in maps if os.path.basename(p) == stem or os.path.basename(p).startswith(stem + ".")]
        if not paths:
            continue
        rec = {"path": paths[0], "how": how}
        found[name] = rec
        try:
            lib = ctypes.CDLL(paths[0])
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
            else:
                v = c_int(-1)
                fn = {"cudart": "cudaRuntimeGetVersion", "nccl": "ncclGetVersion", "hip": "hipRuntimeGetVersion"}[how]
                getattr(lib, fn)(ref(v))
                rec["raw"] = [v.value]
        except Exception as exc:
            rec["error"] = "%s: %s" % (type(exc).__name__, exc)
    return found
try:
    out["loaded"] = _loaded(@LIBRARIES@)
except Exception as exc:
    out["loaded_error"] = repr(exc)
""".replace("@LIBRARIES@", repr(LIBRARIES))


def _three(v: int, major_unit: int) -> str:
    return "%d.%d.%d" % (v // major_unit, (v % major_unit) // 100, v % 100)


def cudart(v: int) -> str:
    return "%d.%d" % (v // 1000, (v % 1000) // 10)


def cudnn(v: int) -> str:
    return _three(v, 10000 if v >= 90000 else 1000)


def nccl(v: int) -> str:
    return _three(v, 10000 if v >= 20900 else 1000)


def hip(v: int) -> str:
    return "%d.%d.%d" % (v // 10000000, (v % 10000000) // 100000, v % 100000)


def decode(how: str, raw: Any) -> Optional[str]:
    """The version a library's own call answered, or None when the answer is unusable
    (the call failed: negative or missing values)."""
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
    table = {"cudart": cudart, "cudnn": cudnn, "nccl": nccl, "hip": hip}
    return table[how](raw[0]) if how in table and raw[0] > 0 else None


def evidence(name: str, rec: Dict[str, Any]) -> str:
    how = str(rec.get("how", ""))
    call = how[5:] if how.startswith("prop:") else CALLS.get(how, how)
    return "%s() of %s (mapped after import torch)" % (call, rec.get("path"))


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
