"""features: seed rows about the GPU programming model that had no check:
torch.cuda.StreamContext, unified (managed) memory and dynamic parallelism.
Each is GPU-only: skip on a host without a GPU, unsupported where the API or
the runtime's entry point is absent, fail when present but wrong."""

from __future__ import annotations

import ctypes
import glob
import os
import re
import shutil
import tempfile

from ..context import Fail, Report, Unsupported
from ..registry import check
from ._common import attempt, missing_feature, randn


@check(
    "features.cuda.stream_context",
    "torch.cuda.StreamContext",
    "feature",
    "features",
    needs=("gpu",),
)
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


# -- unified (managed) memory ------------------------------------------------------------


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
                try:
                    return ctypes.CDLL(path), ("hip" if hip else "cuda"), path
                except OSError:
                    continue
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


@check(
    "features.cuda.unified_memory",
    "Unified memory support in PyTorch",
    "feature",
    "features",
    needs=("gpu",),
)
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


# -- dynamic parallelism -------------------------------------------------------------------

_PARENT_CHILD = r"""
__global__ void valorch_child(float* out, int i) { out[i] = out[i] * 2.0f + 1.0f; }
__global__ void valorch_parent(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) valorch_child<<<1, 1>>>(out, i);
}
torch::Tensor launch(torch::Tensor x) {
  auto y = x.clone();
  int n = y.numel();
  valorch_parent<<<(n + 63) / 64, 64>>>(y.data_ptr<float>(), n);
  return y;
}
"""


# clang's diagnostic for a kernel launch in device code on HIP, where the launch lowers to the
# host-only __hipPushCallConfiguration / hipLaunchKernel: "reference to __host__ function
# '__hipPushCallConfiguration' in __global__ function", or "reference to __global__ function
# 'valorch_child' in __global__ function" (clang Sema err_ref_bad_target)
DEVICE_LAUNCH_REJECTED = re.compile(
    r"reference to __(host|global)__ function '[^']*' in __(global|device)__ function"
)


@check(
    "features.cuda.dynamic_parallelism",
    "Dynamic parallelism",
    "feature",
    "features",
    needs=("gpu",),
)
def dynamic_parallelism(ctx):
    """A torch.utils.cpp_extension kernel launches a child kernel from the device (relocatable device code);
    the children's writes are correct. Unsupported where the toolchain rejects device-side launches (HIP has
    none) or the image has no device compiler.

    Not proven: deep nesting, device-side synchronisation, or performance."""
    torch = ctx.torch
    ctx.require_gpu()
    ext = ctx.load("torch.utils.cpp_extension")
    load_inline = ctx.require_attr(ext, "load_inline")
    compiler = "hipcc" if ctx.vendor == "amd" else "nvcc"
    home = getattr(ext, "ROCM_HOME" if ctx.vendor == "amd" else "CUDA_HOME", None)
    if (
        not (home and os.path.exists(os.path.join(home, "bin", compiler)))
        and shutil.which(compiler) is None
    ):
        raise Unsupported(
            "no %s in this image: a device-side launch cannot be built here" % compiler
        )
    build = tempfile.mkdtemp(prefix="valorch-dynpar-")
    try:
        try:
            mod = load_inline(
                "valorch_dynpar",
                cpp_sources="torch::Tensor launch(torch::Tensor x);",
                cuda_sources=_PARENT_CHILD,
                functions=["launch"],
                build_directory=build,
                extra_cuda_cflags=["-rdc=true"] if compiler == "nvcc" else [],
                extra_ldflags=["-lcudadevrt"] if compiler == "nvcc" else [],
                verbose=False,
            )
        except Exception as exc:
            text = str(exc)
            if (
                missing_feature(exc)
                or "dynamic parallelism" in text.lower()
                or "device-side" in text
                or DEVICE_LAUNCH_REJECTED.search(text)
            ):
                raise Unsupported(
                    "%s rejects a device-side kernel launch: %s" % (compiler, text[-300:])
                ) from exc
            if (
                ctx.vendor == "amd"
            ):  # HIP has no device-side launch: whatever clang says, the feature is absent
                raise Unsupported(
                    "HIP has no dynamic parallelism (HIP docs: kernel launches from device code are "
                    "not supported); hipcc said: %s" % text[-300:]
                ) from exc
            raise Fail("building the parent/child kernel failed: %s" % text[-600:]) from exc
        x = randn(torch, 1024, seed=121)
        got = mod.launch(x.cuda())
        torch.cuda.synchronize()
        err = ctx.assert_close(got, x.double() * 2 + 1, 1e-6, "child kernels' writes")
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return Report(
        "1024 device-side child launches wrote 2x+1, rel err %.1e" % err, {"rel_error": err}
    )
