"""features: seed rows about the GPU programming model that had no check:
torch.cuda.StreamContext, unified (managed) memory and dynamic parallelism.
Each is GPU-only: skip on a host without a GPU, unsupported where the API or
the runtime's entry point is absent, fail when present but wrong."""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import re
import shutil
import subprocess
import tempfile

from ..context import Fail, Report, Unsupported
from ._common import attempt, missing_feature, randn
from .features import gpu_feature


@gpu_feature("features.cuda.stream_context", "torch.cuda.StreamContext")
def stream_context(ctx):
    """Inside torch.cuda.StreamContext(s) the current stream is s and work queued there is correct once the
    default stream waits for it; on leaving, the previous stream is current again.

    Not proven: nested contexts across devices, or overlap of the streams' work."""
    torch = ctx.torch
    cls = ctx.require_attr(torch, "cuda.StreamContext")
    ctx.require_gpu()
    before = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    a = randn(torch, 256, 256, seed=120)
    da = a.cuda()
    side.wait_stream(before)
    with cls(side):
        inside = torch.cuda.current_stream()
        c = da @ da
    after = torch.cuda.current_stream()
    before.wait_stream(side)
    torch.cuda.synchronize()
    if inside != side:
        raise Fail("inside StreamContext(s) the current stream is %s, not s=%s" % (inside, side))
    if after != before:
        raise Fail(
            "after StreamContext the current stream is %s, not the previous %s" % (after, before)
        )
    err = ctx.assert_close(c, a.double() @ a.double(), 5e-3, "matmul queued in StreamContext")
    return Report(
        "StreamContext selected the side stream and restored the previous one; rel err %.1e" % err,
        {"rel_error": err},
    )


def _runtime(ctx):
    """The GPU runtime library torch uses (libamdhip64 / libcudart), loaded with ctypes, and
    its managed-allocation entry points' prefix."""
    torch = ctx.torch
    hip = ctx.vendor == "amd"
    names = ["libamdhip64.so*"] if hip else ["libcudart.so*", "libcudart-*.so*"]
    roots = [os.path.join(os.path.dirname(torch.__file__), "lib")]
    roots += [*glob.glob("/opt/rocm*/lib"), "/usr/local/cuda/lib64", "/usr/lib/x86_64-linux-gnu"]
    roots += glob.glob(
        os.path.join(
            os.path.dirname(os.path.dirname(torch.__file__)), "nvidia", "cuda_runtime", "lib"
        )
    )
    for root in roots:
        for pattern in names:
            for path in sorted(glob.glob(os.path.join(root, pattern))):
                with contextlib.suppress(OSError):
                    return ctypes.CDLL(path), ("hip" if hip else "cuda"), path
    raise Unsupported(
        "no %s runtime library found next to torch or in the usual places"
        % ("HIP (libamdhip64)" if hip else "CUDA (libcudart)")
    )


class _Managed:
    """A managed allocation shown to torch through __cuda_array_interface__."""

    def __init__(self, ptr, n):
        self.__cuda_array_interface__ = {
            "shape": (n,),
            "typestr": "<f4",
            "data": (ptr, False),
            "version": 2,
        }


@gpu_feature("features.cuda.unified_memory", "Unified memory support in PyTorch")
def unified_memory(ctx):
    """Managed memory from the runtime (hipMallocManaged / cudaMallocManaged through ctypes) is written by the CPU,
    wrapped as a GPU tensor (__cuda_array_interface__), summed on the GPU and scaled there, and the CPU reads the
    GPU's writes back from the same pointer.

    Not proven: oversubscription, page migration performance, or unified memory through torch's own allocator
    (PyTorch has no core API for it)."""
    torch = ctx.torch
    ctx.require_gpu()
    lib, rt, path = _runtime(ctx)
    alloc = getattr(lib, rt + "MallocManaged", None)
    free = getattr(lib, rt + "Free", None)
    if alloc is None or free is None:
        raise Unsupported("%s has no %sMallocManaged" % (path, rt))
    n = 1 << 16
    ptr = ctypes.c_void_p()
    code = alloc(ctypes.byref(ptr), ctypes.c_size_t(n * 4), ctypes.c_uint(1))  # attach global
    if code != 0 or not ptr.value:
        raise Unsupported(
            "%sMallocManaged returned error %d: managed memory is not available here" % (rt, code)
        )
    try:
        host = (ctypes.c_float * n).from_address(ptr.value)
        for i in range(n):
            host[i] = float(i % 251)
        t = attempt(
            "torch.as_tensor(managed memory, device='cuda')",
            lambda: torch.as_tensor(_Managed(ptr.value, n), device="cuda"),
        )
        total = float(t.sum())
        want = float(sum(i % 251 for i in range(n)))
        t.mul_(2.0)
        torch.cuda.synchronize()
        back = [host[i] for i in (0, 1, 250, n - 1)]
        metrics = {"runtime": path, "bytes": n * 4, "gpu_sum": total}
        if total != want:
            raise Fail(
                "GPU sum of CPU-written managed memory is %s, expected %s" % (total, want), metrics
            )
        if back != [2.0 * (i % 251) for i in (0, 1, 250, n - 1)]:
            raise Fail("the CPU reads %s after the GPU doubled the values" % back, metrics)
    finally:
        free(ptr)
    return Report(
        "%sMallocManaged memory: CPU writes seen by the GPU, GPU writes seen by the CPU" % rt,
        metrics,
    )


_PARENT_CHILD = r"""
__global__ void valorch_child(float* out, int i) { out[i] = out[i] * 2.0f + 1.0f; }
__global__ void valorch_parent(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) valorch_child<<<1, 1>>>(out, i);
}
"""
# the host entry point for HIP (load_inline builds a torch extension around it)
_HIP_LAUNCH = r"""
torch::Tensor launch(torch::Tensor x) {
  auto y = x.clone();
  int n = y.numel();
  valorch_parent<<<(n + 63) / 64, 64>>>(y.data_ptr<float>(), n);
  return y;
}
"""
# the host entry point for CUDA: a plain C function in a shared library of its own, built by
# nvcc with the device-link step that relocatable device code needs
_CUDA_LAUNCH = r"""
extern "C" int valorch_dynpar_launch(float* out, int n) {
  valorch_parent<<<(n + 63) / 64, 64>>>(out, n);
  return (int)cudaDeviceSynchronize();
}
"""


# clang's diagnostic for a kernel launch in device code on HIP, where the launch lowers to the
# host-only __hipPushCallConfiguration / hipLaunchKernel: "reference to __host__ function
# '__hipPushCallConfiguration' in __global__ function", or "reference to __global__ function
# 'valorch_child' in __global__ function" (clang Sema err_ref_bad_target)
DEVICE_LAUNCH_REJECTED = re.compile(
    r"reference to __(host|global)__ function '[^']*' in __(global|device)__ function"
)


@gpu_feature("features.cuda.dynamic_parallelism", "Dynamic parallelism")
def dynamic_parallelism(ctx):
    """A kernel launches a child kernel from the device (relocatable device code); the children's writes are
    correct. On CUDA the program is built the way the CUDA docs prescribe for relocatable device code:
    nvcc --device-c, then nvcc --device-link against cudadevrt, then the shared library; torch's load_inline
    has no device-link step, so a module it builds with -rdc=true cannot load ("undefined symbol:
    __cudaRegisterLinkedBinary_...", pytorch/pytorch#57543). Unsupported where the toolchain rejects
    device-side launches (HIP has none) or the image has no device compiler.

    Not proven: deep nesting, device-side synchronisation, or performance."""
    torch = ctx.torch
    ctx.require_gpu()
    ext = ctx.load("torch.utils.cpp_extension")
    compiler = "hipcc" if ctx.vendor == "amd" else "nvcc"
    home = getattr(ext, "ROCM_HOME" if ctx.vendor == "amd" else "CUDA_HOME", None)
    built = os.path.join(home, "bin", compiler) if home else ""
    exe = built if built and os.path.exists(built) else shutil.which(compiler)
    if exe is None:
        raise Unsupported(
            "no %s in this image: a device-side launch cannot be built here" % compiler
        )
    x = randn(torch, 1024, seed=121)
    build = tempfile.mkdtemp(prefix="valorch-dynpar-")
    try:
        if ctx.vendor == "amd":
            got = _dynpar_hip(ext, build, x.cuda())
        else:
            got = _dynpar_cuda(torch, exe, build, x)
        err = ctx.assert_close(got, x.double() * 2 + 1, 1e-6, "child kernels' writes")
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return Report(
        "1024 device-side child launches wrote 2x+1, rel err %.1e" % err, {"rel_error": err}
    )


def _nvcc(argv, what):
    proc = subprocess.run(argv, capture_output=True, timeout=600)
    if proc.returncode != 0:
        text = (proc.stdout + proc.stderr).decode("utf-8", "replace")
        if "requires separate compilation" in text or "dynamic parallelism" in text.lower():
            raise Unsupported("nvcc rejects a device-side kernel launch: %s" % text[-300:])
        raise Fail("%s failed (%s): %s" % (what, " ".join(argv[:3]), text[-600:]))


def _dynpar_cuda(torch, nvcc, build, x):
    """nvcc --device-c, --device-link (cudadevrt), then -shared: the CUDA docs' recipe for
    relocatable device code; the library is loaded with ctypes and writes into torch's tensor."""
    major, minor = torch.cuda.get_device_capability()
    arch = "-arch=sm_%d%d" % (major, minor)
    src = os.path.join(build, "valorch_dynpar.cu")
    with open(src, "w") as fh:
        fh.write(_PARENT_CHILD + _CUDA_LAUNCH)
    obj, dlink = os.path.join(build, "dynpar.o"), os.path.join(build, "dynpar_dlink.o")
    lib = os.path.join(build, "libvalorch_dynpar.so")
    pic = ["-Xcompiler", "-fPIC"]
    _nvcc([nvcc, arch, "-rdc=true", *pic, "-c", src, "-o", obj], "nvcc --device-c")
    _nvcc([nvcc, arch, "-dlink", *pic, obj, "-o", dlink, "-lcudadevrt"], "nvcc --device-link")
    _nvcc([nvcc, arch, "-shared", obj, dlink, "-o", lib, "-lcudadevrt"], "nvcc -shared")
    try:
        launch = ctypes.CDLL(lib).valorch_dynpar_launch
    except OSError as exc:
        raise Fail("the device-linked library does not load: %s" % exc) from exc
    launch.argtypes, launch.restype = [ctypes.c_void_p, ctypes.c_int], ctypes.c_int
    y = x.cuda()
    rc = launch(ctypes.c_void_p(y.data_ptr()), y.numel())
    if rc != 0:
        raise Fail("the parent kernel's launch returned cudaError %d" % rc, {"cuda_error": rc})
    torch.cuda.synchronize()
    return y


def _dynpar_hip(ext, build, dx):
    load_inline = getattr(ext, "load_inline", None)
    if load_inline is None:
        raise Unsupported("torch.utils.cpp_extension has no load_inline in this build")
    try:
        mod = load_inline(
            "valorch_dynpar",
            cpp_sources="torch::Tensor launch(torch::Tensor x);",
            cuda_sources=_PARENT_CHILD + _HIP_LAUNCH,
            functions=["launch"],
            build_directory=build,
            verbose=False,
        )
    except Exception as exc:
        text = str(exc)
        if missing_feature(exc) or DEVICE_LAUNCH_REJECTED.search(text):
            raise Unsupported(
                "hipcc rejects a device-side kernel launch: %s" % text[-300:]
            ) from exc
        # HIP has no device-side launch: whatever clang says, the feature is absent
        raise Unsupported(
            "HIP has no dynamic parallelism (HIP docs: kernel launches from device code are "
            "not supported); hipcc said: %s" % text[-300:]
        ) from exc
    return mod.launch(dx)
