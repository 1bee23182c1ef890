"""Host-side C entry points of ROCm libraries that have no Python API, called through
ctypes without a GPU: a version query, an error-name table, a host handle or context
created, read back and released. Each call proves that the library in the image loads
and answers through its public C API; none proves the row's feature (contractions,
decoding, augmentation, OpenVX graphs, pipelines need a GPU or a kernel run), so the
row stays ``partial``. Every symbol, its signature and its constants are as the
library's public header declares them (docs/checks.md, "Host entry points", cites each).

A call returns the text of what it did, or raises ``HostCallError`` with what went
wrong; ``NoEntryPointError`` when the library exports none of the symbols (an older release
whose header has no C linkage, a build without them)."""

from __future__ import annotations

import ctypes
from typing import Callable, Dict, List, Optional, Tuple


class HostCallError(Exception):
    """The library loaded and the entry point exists, but the call reported an error."""


class NoEntryPointError(Exception):
    """None of the entry points this probe knows is exported by the library."""


def _fn(lib: ctypes.CDLL, name: str, restype, argtypes):
    f = getattr(lib, name)  # AttributeError: not exported (with C linkage)
    f.restype, f.argtypes = restype, argtypes
    return f


def _exports(lib: ctypes.CDLL, *names: str) -> bool:
    return all(hasattr(lib, n) for n in names)


def hiptensor(lib: ctypes.CDLL) -> str:
    """hipTensor 2.x, hiptensor/hiptensor.h (extern "C"): ``size_t hiptensorGetVersion()``
    (major * 10000 + minor * 100 + patch) and ``const char* hiptensorGetErrorString(const
    hiptensorStatus_t)``; HIPTENSOR_STATUS_SUCCESS is 0 (hiptensor_types). hipTensor 1.x
    declares them in hiptensor.hpp without C linkage: no entry point here."""
    done = []  # type: List[str]
    if _exports(lib, "hiptensorGetVersion"):
        v = _fn(lib, "hiptensorGetVersion", ctypes.c_size_t, [])()
        if not v:
            raise HostCallError("hiptensorGetVersion() returned 0")
        done.append(
            "hiptensorGetVersion() = %d (%d.%d.%d)" % (v, v // 10000, v // 100 % 100, v % 100)
        )
    if _exports(lib, "hiptensorGetErrorString"):
        text = _fn(lib, "hiptensorGetErrorString", ctypes.c_char_p, [ctypes.c_int])(0)
        name = (text or b"").decode("ascii", "replace")[:80]
        if name != "HIPTENSOR_STATUS_SUCCESS":
            raise HostCallError(
                "hiptensorGetErrorString(HIPTENSOR_STATUS_SUCCESS) returned %r" % name
            )
        done.append("hiptensorGetErrorString(0) = %r" % name)
    if not done:
        raise NoEntryPointError(
            "no hiptensorGetVersion / hiptensorGetErrorString with C linkage (hipTensor 1.x "
            'declares its API in hiptensor.hpp without extern "C")'
        )
    return ", ".join(done)


#: rocdecode.h: ``typedef enum rocDecStatus_enum { ... ROCDEC_NOT_SUPPORTED = -8, ... }``
ROCDEC_NOT_SUPPORTED = -8


def rocdecode(lib: ctypes.CDLL) -> str:
    """rocDecode, rocdecode/rocdecode.h (extern "C"): ``const char* rocDecGetErrorName(rocDecStatus)``,
    which names each status (ROCDEC_NOT_SUPPORTED = -8). Its other entry points take a GPU."""
    if not _exports(lib, "rocDecGetErrorName"):
        raise NoEntryPointError("no rocDecGetErrorName")
    text = _fn(lib, "rocDecGetErrorName", ctypes.c_char_p, [ctypes.c_int])(ROCDEC_NOT_SUPPORTED)
    name = (text or b"").decode("ascii", "replace")[:80]
    if name != "ROCDEC_NOT_SUPPORTED":
        raise HostCallError("rocDecGetErrorName(ROCDEC_NOT_SUPPORTED) returned %r" % name)
    return "rocDecGetErrorName(-8) = %r" % name


# rppdefs.h: typedef enum { RPP_HOST_BACKEND, RPP_HIP_BACKEND, RPP_OCL_BACKEND } RppBackend
RPP_HOST_BACKEND = 0
RPP_BATCH = 3


def rpp(lib: ctypes.CDLL) -> str:
    """RPP, rpp/rpp.h (extern "C"; rppStatusSuccess is 0): a host handle for a batch of 3 is created,
    its batch size read back with ``rppGetBatchSize(rppHandle_t, size_t*)`` and destroyed. RPP 2.x:
    ``rppCreate(rppHandle_t*, size_t nBatchSize, Rpp32u numThreads, void* stream, RppBackend)`` and
    ``rppDestroy(rppHandle_t, RppBackend)``; RPP 1.x: ``rppCreateWithBatchSize(rppHandle_t*, size_t,
    Rpp32u)`` and ``rppDestroyHost(rppHandle_t)``."""
    handle, vp, i = ctypes.c_void_p(), ctypes.c_void_p, ctypes.c_int
    handle_p, size_t, uint = ctypes.POINTER(vp), ctypes.c_size_t, ctypes.c_uint
    if _exports(lib, "rppCreateWithBatchSize", "rppDestroyHost", "rppGetBatchSize"):
        create = "rppCreateWithBatchSize"
        status = _fn(lib, create, i, [handle_p, size_t, uint])(ctypes.byref(handle), RPP_BATCH, 1)

        def destroy() -> int:
            return _fn(lib, "rppDestroyHost", i, [vp])(handle)
    elif _exports(lib, "rppCreate", "rppDestroy", "rppGetBatchSize"):
        create = "rppCreate"
        status = _fn(lib, create, i, [handle_p, size_t, uint, vp, i])(
            ctypes.byref(handle), RPP_BATCH, 1, None, RPP_HOST_BACKEND
        )

        def destroy() -> int:
            return _fn(lib, "rppDestroy", i, [vp, i])(handle, RPP_HOST_BACKEND)
    else:
        raise NoEntryPointError(
            "no rppCreateWithBatchSize/rppDestroyHost (RPP 1.x) nor rppCreate/rppDestroy (RPP 2.x)"
        )
    if status != 0 or not handle.value:
        raise HostCallError("%s(host, batch %d) returned status %d" % (create, RPP_BATCH, status))
    try:
        size = ctypes.c_size_t(0)
        got = _fn(lib, "rppGetBatchSize", i, [vp, ctypes.POINTER(size_t)])(
            handle, ctypes.byref(size)
        )
        if got != 0 or size.value != RPP_BATCH:
            raise HostCallError(
                "rppGetBatchSize returned status %d, batch %d (created with %d)"
                % (got, size.value, RPP_BATCH)
            )
    finally:
        gone = destroy()
    if gone != 0:
        raise HostCallError("destroying the host handle returned status %d" % gone)
    return "%s: a host handle (batch %d) created, rppGetBatchSize read %d back, destroyed" % (
        create,
        RPP_BATCH,
        size.value,
    )


#: OpenVX (MIVisionX amd_openvx/openvx/include/VX/vx_types.h): VX_ATTRIBUTE_BASE(VX_ID_KHRONOS = 0,
#: VX_TYPE_CONTEXT = 0x801) = 0x80100; VX_CONTEXT_VENDOR_ID (+0, vx_uint16), VX_CONTEXT_UNIQUE_KERNELS
#: (+2, vx_uint32); vx_vendors.h: VX_ID_AMD = 0x00D.
VX_CONTEXT_VENDOR_ID, VX_CONTEXT_UNIQUE_KERNELS, VX_ID_AMD = 0x80100, 0x80102, 0x00D


def mivisionx(lib: ctypes.CDLL) -> str:
    """MIVisionX's OpenVX, VX/vx_api.h (extern "C"): ``vx_context vxCreateContext(void)``,
    ``vx_status vxGetStatus(vx_reference)`` (VX_SUCCESS is 0), ``vxQueryContext(vx_context, vx_enum,
    void*, vx_size)`` for the vendor id and the number of kernels, ``vxReleaseContext(vx_context*)``."""
    if not _exports(lib, "vxCreateContext", "vxGetStatus", "vxQueryContext", "vxReleaseContext"):
        raise NoEntryPointError(
            "no vxCreateContext / vxGetStatus / vxQueryContext / vxReleaseContext"
        )
    vp, i = ctypes.c_void_p, ctypes.c_int
    ctx = vp(_fn(lib, "vxCreateContext", vp, [])())
    status = _fn(lib, "vxGetStatus", i, [vp])(ctx)
    if not ctx.value or status != 0:
        raise HostCallError("vxCreateContext() gave a context whose vxGetStatus is %d" % status)
    try:
        query = _fn(lib, "vxQueryContext", i, [vp, i, vp, ctypes.c_size_t])
        vendor, kernels = ctypes.c_uint16(0), ctypes.c_uint32(0)
        s1 = query(ctx, VX_CONTEXT_VENDOR_ID, ctypes.byref(vendor), ctypes.sizeof(vendor))
        s2 = query(ctx, VX_CONTEXT_UNIQUE_KERNELS, ctypes.byref(kernels), ctypes.sizeof(kernels))
        if s1 != 0 or s2 != 0:
            raise HostCallError("vxQueryContext returned %d (vendor id), %d (kernels)" % (s1, s2))
    finally:
        released = _fn(lib, "vxReleaseContext", i, [ctypes.POINTER(vp)])(ctypes.byref(ctx))
    if released != 0:
        raise HostCallError("vxReleaseContext returned %d" % released)
    who = "AMD" if vendor.value == VX_ID_AMD else "vendor 0x%03x" % vendor.value
    return "vxCreateContext: an OpenVX context (%s, %d kernels registered) queried and released" % (
        who,
        kernels.value,
    )


ROCAL_PROCESS_CPU, ROCAL_FP32, ROCAL_OK = 1, 0, 0  # rocal_api_types.h


def rocal(lib: ctypes.CDLL) -> str:
    """rocAL, rocal/rocal_api.h (extern "C"): ``RocalContext rocalCreate(size_t batch_size,
    RocalProcessMode affinity, int gpu_id, size_t cpu_thread_count, size_t prefetch_queue_depth,
    RocalTensorOutputType)`` with ROCAL_PROCESS_CPU (1) and ROCAL_FP32 (0); ``rocalGetStatus``
    (rocal_api_info.h; ROCAL_OK is 0) and ``rocalRelease``."""
    if not _exports(lib, "rocalCreate", "rocalGetStatus", "rocalRelease"):
        raise NoEntryPointError("no rocalCreate / rocalGetStatus / rocalRelease")
    size_t, c_int = ctypes.c_size_t, ctypes.c_int
    argtypes = [size_t, c_int, c_int, size_t, size_t, c_int]  # rocalCreate's, as declared above
    ctx = _fn(lib, "rocalCreate", ctypes.c_void_p, argtypes)(
        2, ROCAL_PROCESS_CPU, 0, 1, 3, ROCAL_FP32
    )
    if not ctx:
        raise HostCallError("rocalCreate(batch 2, ROCAL_PROCESS_CPU) returned no context")
    try:
        status = _fn(lib, "rocalGetStatus", ctypes.c_int, [ctypes.c_void_p])(ctx)
    finally:
        released = _fn(lib, "rocalRelease", ctypes.c_int, [ctypes.c_void_p])(ctx)
    if status != ROCAL_OK or released != ROCAL_OK:
        raise HostCallError("rocalGetStatus returned %d, rocalRelease %d" % (status, released))
    return (
        "rocalCreate: a CPU pipeline context (batch 2) created, rocalGetStatus ROCAL_OK, released"
    )


#: the library file whose entry points are called, and the call, per row
HOST_CALLS: Dict[str, Tuple[str, Callable[[ctypes.CDLL], str]]] = {
    "hipTensor": ("libhiptensor.so", hiptensor),
    "rocDecode": ("librocdecode.so", rocdecode),
    "RPP": ("librpp.so", rpp),
    "MIVisionX": ("libopenvx.so", mivisionx),
    "rocAL": ("librocal.so", rocal),
}


def load(files: List[str], stem: str) -> Tuple[Optional[ctypes.CDLL], str, str]:
    """The first of ``files`` named ``stem``[.N...] that the dynamic loader accepts: (library, path,
    ""), or (None, path, the loader's error) when none loads, or (None, "", "") when none is named so."""
    candidates = [f for f in files if f.rsplit("/", 1)[-1].startswith(stem)]
    error, tried = "", ""
    for path in candidates:
        try:
            return ctypes.CDLL(path), path, ""
        except OSError as exc:
            error, tried = str(exc)[:300], path
    return None, tried, error
