"""kernels: the math libraries under the framework, op by op, on the device
under test. Each check compares with a float64 CPU reference by relative error
(dtype-appropriate tolerance, never on all-zero inputs) and times the op."""

from __future__ import annotations

import contextlib
import copy
import math

from .. import blas_log
from ..context import Fail, Unsupported
from ..registry import checks_of, suite
from . import _own_logs, _sdpa
from ._common import attempt, fp_tolerance, randn, timed

suite(
    "kernels",
    "torch",
    "Backend math libraries op by op: numerics vs a float64 CPU reference, timed.",
)

BLAS = "hipBLAS/cuBLAS"
BLASLT = "hipBLASLt/cuBLASLt"
DNN = "MIOpen/cuDNN"
TENSILE = "rocBLAS/hipBLASLt (Tensile)"  # evidence.KERNEL_LIBRARIES' label for Cijk_ kernels

kernel_check = checks_of("kernel", "kernels", unit="s")


def _dtype(torch, name):
    dt = getattr(torch, name, None)
    if dt is None:
        raise Unsupported("torch has no dtype %s" % name)
    return dt


def _matmul(ctx, name, n=256):
    torch = ctx.torch
    dt = _dtype(torch, name)
    a = randn(torch, n, n, seed=1).to(dt)
    b = randn(torch, n, n, seed=2).to(dt)
    ref = a.double() @ b.double()  # from the rounded inputs: only the kernel's error counts
    da, db = a.to(ctx.device), b.to(ctx.device)
    fam = "blas" if name in ("float32", "float64") else None
    got = attempt("matmul %s on %s" % (name, ctx.device), lambda: ctx.observe(lambda: da @ db, fam))
    if got.dtype != dt:
        raise Fail("matmul %s returned %s" % (name, got.dtype))
    tol = fp_tolerance(ctx, name, tf32_possible=True)
    err = ctx.assert_close(got, ref, tol, "matmul %s" % name)
    metrics = {"rel_error": err, "tolerance": tol, "n": n, "flop": 2 * n**3}
    if ctx.device == "cuda" and ctx.vendor == "nvidia":
        metrics.update(
            _own_logs.decide(ctx, _own_logs.matmul_script(n, name), _own_logs.NVIDIA_GEMM)
        )
    return timed(
        ctx,
        lambda: da @ db,
        "%dx%d %s matmul on %s: rel err %.2e (tol %.0e)" % (n, n, name, ctx.device, err, tol),
        metrics,
    )


@kernel_check("kernels.matmul.fp32", "matmul (float32)", library=BLAS)
def matmul_fp32(ctx):
    """A 256x256 float32 matmul on the device matches the float64 CPU product (TF32-level tolerance on a GPU).

    Not proven: other shapes, transposes or batch sizes; which BLAS ran beyond the recorded evidence;
    performance beyond these timings."""
    return _matmul(ctx, "float32")


@kernel_check("kernels.matmul.fp16", "matmul (float16)", library=BLAS)
def matmul_fp16(ctx):
    """A 256x256 float16 matmul on the device matches the float64 product of the same half inputs within 5e-3.

    Not proven: other shapes; float16 accumulation behaviour; performance beyond these timings."""
    return _matmul(ctx, "float16")


@kernel_check("kernels.matmul.bf16", "matmul (bfloat16)", library=BLAS)
def matmul_bf16(ctx):
    """A 256x256 bfloat16 matmul on the device matches the float64 product of the same bf16 inputs within 3e-2.

    Not proven: other shapes; bfloat16 accumulation behaviour; performance beyond these timings."""
    return _matmul(ctx, "bfloat16")


@kernel_check("kernels.linear.bf16", "linear with bias (bfloat16)", library=BLASLT)
def linear_bf16(ctx):
    """torch.nn.functional.linear with bias in bfloat16 (the fused GEMM+bias epilogue path) matches float64.

    Which library served it: on ROCm, rocBLAS and hipBLASLt both run Tensile "Cijk_" kernels, so the libraries'
    own bench logs decide (probe/blas_log.py: the GEMM again in a child with ROCBLAS_LAYER / HIPBLASLT_LOG_MASK);
    on CUDA, cuBLAS and cuBLASLt share kernel names, so cuBLASLt's and cuBLAS's own logs decide (probe/vendor_log.py:
    CUBLASLT_LOG_LEVEL, CUBLAS_LOGINFO_DBG); torch.backends.cuda.preferred_blas_library() is recorded as a metric.

    Not proven: that the fused epilogue (rather than a GEMM plus a separate add) ran, unless the recorded
    kernels show it."""
    torch = ctx.torch
    F = torch.nn.functional  # noqa: N806 (PyTorch's own alias for torch.nn.functional)
    x = randn(torch, 128, 256, seed=3).bfloat16()
    w = randn(torch, 192, 256, seed=4).bfloat16()
    b = randn(torch, 192, seed=5).bfloat16()
    ref = F.linear(x.double(), w.double(), b.double())
    dx, dw, db = x.to(ctx.device), w.to(ctx.device), b.to(ctx.device)
    got = attempt(
        "linear bfloat16 on %s" % ctx.device, lambda: ctx.observe(lambda: F.linear(dx, dw, db))
    )
    tol = fp_tolerance(ctx, "bfloat16")
    err = ctx.assert_close(got, ref, tol, "linear bf16")
    metrics = {"rel_error": err, "tolerance": tol}
    pref = getattr(getattr(torch.backends, "cuda", None), "preferred_blas_library", None)
    if ctx.device == "cuda" and pref is not None:
        with contextlib.suppress(Exception):
            metrics["preferred_blas_library"] = str(pref())
    if ctx.device == "cuda" and ctx.vendor == "nvidia":
        metrics.update(_own_logs.decide(ctx, LINEAR_SCRIPT, _own_logs.NVIDIA_GEMM))
    if ctx.device == "cuda" and ctx.vendor == "amd":
        facts = blas_log.served_by(LINEAR_SCRIPT)
        metrics.update((k, v) for k, v in facts.items() if k != "libraries")
        if facts["libraries"]:
            lib = facts["libraries"][0]
            ctx.resolve(TENSILE, lib, "%s's bench log recorded the call" % lib)
    return timed(
        ctx, lambda: F.linear(dx, dw, db), "linear 128x256 -> 192 bf16: rel err %.2e" % err, metrics
    )


# the same linear in a child interpreter, for the libraries' bench logs (blas_log.served_by)
LINEAR_SCRIPT = (
    "import torch\nF = torch.nn.functional\nx = torch.randn(128, 256, device='cuda').bfloat16()\n"
    "w = torch.randn(192, 256, device='cuda').bfloat16()\nb = torch.randn(192, device='cuda').bfloat16()\n"
    "F.linear(x, w, b)\ntorch.cuda.synchronize()\n"
)


@kernel_check("kernels.bmm.fp32", "batched matmul (float32)", library=BLAS)
def bmm_fp32(ctx):
    """A batch of 16 64x128 @ 128x64 float32 matmuls (torch.bmm) matches float64.

    Not proven: strided or broadcast batches, other dtypes."""
    torch = ctx.torch
    a, b = randn(torch, 16, 64, 128, seed=6), randn(torch, 16, 128, 64, seed=7)
    tol = fp_tolerance(ctx, "float32", tf32_possible=True)
    ref = torch.bmm(a.double(), b.double())
    return _compared(ctx, torch.bmm, [a, b], ref, tol, "bmm fp32", "bmm 16x64x128x64", "blas")


def _compared(ctx, op, args, ref, tol, what, label, family=None):
    """``op(*args)`` with ``args`` on the device, observed (``family`` as ``ctx.observe`` takes
    it), against the float64 ``ref`` within ``tol``, then timed: "``label``: rel err ..."."""
    dargs = [a.to(ctx.device) for a in args]
    err = ctx.assert_close(ctx.observe(lambda: op(*dargs), family), ref, tol, what)
    metrics = {"rel_error": err, "tolerance": tol}
    return timed(ctx, lambda: op(*dargs), "%s: rel err %.2e" % (label, err), metrics)


def _conv(ctx, what, x_shape, w_shape, seed):
    """``what`` (conv2d, conv3d) of random inputs of these shapes (seeds ``seed``, ``seed + 1``)."""
    torch = ctx.torch
    fn = getattr(torch.nn.functional, what)
    x, w = randn(torch, *x_shape, seed=seed), randn(torch, *w_shape, seed=seed + 1)
    ref = fn(x.double(), w.double(), padding=1)
    dx, dw = x.to(ctx.device), w.to(ctx.device)
    got = ctx.observe(lambda: fn(dx, dw, padding=1))
    tol = fp_tolerance(ctx, "float32", tf32_possible=True)
    err = ctx.assert_close(got, ref, tol, what)
    metrics = {
        "rel_error": err,
        "tolerance": tol,
        "cudnn_enabled": bool(torch.backends.cudnn.enabled),
    }
    if ctx.device == "cuda" and ctx.vendor == "amd":
        script = _own_logs.conv_script(x.shape, w.shape, what)
        metrics.update(_own_logs.decide(ctx, script, _own_logs.MIOPEN_CONV))
    return timed(
        ctx,
        lambda: fn(dx, dw, padding=1),
        "%s %s -> %s: rel err %.2e" % (what, tuple(x.shape), tuple(got.shape), err),
        metrics,
    )


@kernel_check("kernels.conv2d.fp32", "conv2d (float32)", library=DNN)
def conv2d_fp32(ctx):
    """A 3x3 float32 conv2d (4x8x32x32 input, 16 filters) on the device matches float64.

    Which library served it: on ROCm, MIOpen runs its own kernels, Composable Kernel instances or Tensile
    GEMMs for one convolution, so MIOpen's own log decides (probe/vendor_log.py: the conv again in a child with
    MIOPEN_ENABLE_LOGGING_CMD=1).

    Not proven: other kernel sizes, strides, groups, dilations, layouts (channels-last) or the backward pass."""
    return _conv(ctx, "conv2d", (4, 8, 32, 32), (16, 8, 3, 3), seed=8)


@kernel_check("kernels.conv3d.fp32", "conv3d (float32)", library=DNN)
def conv3d_fp32(ctx):
    """A 3x3x3 float32 conv3d (2x4x8x16x16 input, 8 filters) on the device matches float64.

    Which library served it: on ROCm, MIOpen runs its own kernels, Composable Kernel instances or Tensile
    GEMMs for one convolution, so MIOpen's own log decides (probe/vendor_log.py: the conv again in a child with
    MIOPEN_ENABLE_LOGGING_CMD=1).

    Not proven: other kernel sizes, strides, layouts or the backward pass."""
    return _conv(ctx, "conv3d", (2, 4, 8, 16, 16), (8, 4, 3, 3, 3), seed=10)


@kernel_check(
    "kernels.sdpa.fp32",
    "scaled dot-product attention",
    library="AOTriton/FlashAttention",
    version=2,
)
def sdpa(ctx):
    """torch.nn.functional.scaled_dot_product_attention (causal, float32) matches softmax(QK^T/sqrt(d))V in float64;
    then each backend (flash, mem_efficient, math, cudnn) is forced in turn (torch.nn.attention.sdpa_kernel) and the
    operator torch.profiler records says which implementation actually ran (flash in float16/bfloat16 on a GPU).

    Not proven: attention masks, dropout, backward, or other shapes and head sizes; a backend recorded as
    unavailable may run for other inputs."""
    torch = ctx.torch
    fn = ctx.require_attr(torch, "nn.functional.scaled_dot_product_attention")
    q, k, v = _sdpa.inputs(torch, (2, 4, 64, 32), (12, 13, 14))
    ref = _sdpa.reference(torch, q, k, v, True)
    dq, dk, dv = q.to(ctx.device), k.to(ctx.device), v.to(ctx.device)
    got = attempt(
        "sdpa on %s" % ctx.device, lambda: ctx.observe(lambda: fn(dq, dk, dv, is_causal=True))
    )
    tol = fp_tolerance(ctx, "float32", tf32_possible=True)
    err = ctx.assert_close(got, ref, tol, "sdpa")
    default = _sdpa.run_once(ctx, fn, q, k, v, True, "float32", None)
    metrics = {
        "rel_error": err,
        "tolerance": tol,
        "default_backend": ",".join(default.get("backends") or []),
    }
    notes = []
    for backend in _sdpa.BACKENDS:
        r = _sdpa.forced(ctx, fn, backend, q, k, v, True)
        metrics["sdpa_" + backend] = _sdpa.describe(backend, r)[:300]
        notes.append(
            _sdpa.describe(backend, r).split(" (")[0]
            if r["state"] == "ran"
            else "%s %s" % (backend, r["state"])
        )
        if (
            r["state"] == "ran"
            and backend in r["backends"]
            and not r["rel_error"] <= r["tolerance"]
        ):
            raise Fail(
                "SDPA with only %s enabled (%s): relative error %.3e exceeds %.1e"
                % (backend, r["dtype"], r["rel_error"], r["tolerance"]),
                metrics,
            )
    return timed(
        ctx,
        lambda: fn(dq, dk, dv, is_causal=True),
        "causal SDPA 2x4x64x32: rel err %.2e; default ran %s; forced: %s"
        % (err, metrics["default_backend"] or "unidentified", "; ".join(notes)),
        metrics,
    )


@kernel_check("kernels.lstm.fp32", "LSTM (float32)", library=DNN)
def lstm(ctx):
    """A 2-layer float32 LSTM forward on the device matches the same weights run in float64 on the CPU.

    Not proven: GRU/RNN cells, bidirectional or packed sequences, the backward pass."""
    torch = ctx.torch
    torch.manual_seed(0)
    mod = torch.nn.LSTM(16, 32, num_layers=2, batch_first=True)
    x = randn(torch, 4, 20, 16, seed=15)
    ref, _ = copy.deepcopy(mod).double()(x.double())
    dmod = mod.to(ctx.device)

    def op(t):
        with torch.no_grad():
            return dmod(t)[0]

    tol = fp_tolerance(ctx, "float32", tf32_possible=True)
    return _compared(ctx, op, [x], ref, tol, "lstm", "LSTM 2x(16->32), seq 20, batch 4", "blas")


@kernel_check("kernels.fft.c64", "FFT (complex64)", library="hipFFT/cuFFT")
def fft(ctx):
    """A batched 1-D complex64 FFT (8x1024) and a real 2-D FFT on the device match complex128.

    Not proven: other lengths (non power-of-two, large prime factors), inverse or double-precision transforms."""
    torch = ctx.torch
    tfft = ctx.require_attr(torch, "fft")
    x = torch.complex(randn(torch, 8, 1024, seed=16), randn(torch, 8, 1024, seed=17))
    r = randn(torch, 64, 64, seed=18)
    ref1 = torch.view_as_real(tfft.fft(x.to(torch.complex128)))
    ref2 = torch.view_as_real(tfft.rfft2(r.double()))
    dx, dr = x.to(ctx.device), r.to(ctx.device)
    got1 = torch.view_as_real(ctx.observe(lambda: tfft.fft(dx)))
    got2 = torch.view_as_real(ctx.observe(lambda: tfft.rfft2(dr)))
    err1 = ctx.assert_close(got1, ref1, 1e-4, "fft c64")
    err2 = ctx.assert_close(got2, ref2, 1e-4, "rfft2 f32")
    return timed(
        ctx,
        lambda: tfft.fft(dx),
        "fft 8x1024 rel err %.2e, rfft2 64x64 rel err %.2e" % (err1, err2),
        {"rel_error": max(err1, err2), "tolerance": 1e-4},
    )


@kernel_check("kernels.sort.fp32", "sort (float32)", library="hipCUB/CUB")
def sort(ctx):
    """Sorting 65536 float32 values on the device gives exactly the CPU order, and the indices permute the input.

    Not proven: stable sort with duplicates, other dtypes or segmented sorts."""
    torch = ctx.torch
    x = randn(torch, 65536, seed=19)
    ref_v, _ = torch.sort(x.double())
    dx = x.to(ctx.device)
    v, i = ctx.observe(lambda: torch.sort(dx))
    err = ctx.assert_close(v, ref_v, 0.0, "sort values")
    if not torch.equal(dx[i].cpu(), v.cpu()):
        raise Fail("sort indices do not gather the sorted values")
    return timed(
        ctx, lambda: torch.sort(dx), "sort 65536 fp32: exact", {"rel_error": err, "n": 65536}
    )


@kernel_check("kernels.topk.fp32", "topk (float32)", library="ATen (radix select)", version=2)
def topk(ctx):
    """torch.topk(k=32) over 64 rows of 4096 float32 values matches the CPU float64 top values exactly. On a GPU
    this runs ATen's own radix-select kernels (pytorch/pytorch aten/src/ATen/native/cuda/TensorTopK.cu:
    "at::native::sbtopk::gatherTopK", "mbtopk::..."), not CUB / hipCUB: the row is labelled ATen, and a result
    names whatever library the profiler saw.

    Not proven: large k, other dtypes, or ties."""
    torch = ctx.torch
    x = randn(torch, 64, 4096, seed=20)
    ref, _ = torch.topk(x.double(), 32, dim=1)
    dx = x.to(ctx.device)
    got, idx = ctx.observe(lambda: torch.topk(dx, 32, dim=1))
    err = ctx.assert_close(got, ref, 0.0, "topk values")
    if not torch.equal(torch.gather(dx, 1, idx).cpu(), got.cpu()):
        raise Fail("topk indices do not gather the top values")
    return timed(
        ctx, lambda: torch.topk(dx, 32, dim=1), "topk k=32 of 64x4096: exact", {"rel_error": err}
    )


@kernel_check("kernels.cumsum.fp32", "cumsum (float32)", library="hipCUB/CUB")
def cumsum(ctx):
    """A float32 prefix sum (torch.cumsum) over 65536 values on the device matches float64 within 1e-4.

    Not proven: other scans (cumprod, logcumsumexp) or dtypes."""
    torch = ctx.torch
    x = randn(torch, 65536, seed=21).abs()
    ref = torch.cumsum(x.double(), 0)
    return _compared(ctx, lambda t: torch.cumsum(t, 0), [x], ref, 1e-4, "cumsum", "cumsum 65536")


@kernel_check("kernels.randn.stats", "random normal generation", library="ATen (Philox)", version=2)
def randn_stats(ctx):
    """2^20 normal samples generated on the device have mean 0, std 1 and 68.3% within one sigma (6-sigma bounds).
    torch.randn runs ATen's Philox kernels (aten/src/ATen/native/cuda/DistributionTemplates.h, with the
    header-only curand_kernel.h / hiprand device functions), not the hipRAND / cuRAND host libraries.

    Not proven: the quality of other distributions (uniform, bernoulli, dropout masks) or reproducibility
    across devices."""
    torch = ctx.torch
    n = 1 << 20
    g = torch.Generator(device=ctx.device)
    g.manual_seed(1234)
    x = ctx.observe(lambda: torch.randn(n, device=ctx.device, generator=g)).double().cpu()
    mean, std = float(x.mean()), float(x.std())
    within = float((x.abs() < 1.0).double().mean())
    metrics = {"mean": mean, "std": std, "within_1sigma": within, "n": n}
    p = 0.682689492
    if (
        abs(mean) > 6 / math.sqrt(n)
        or abs(std - 1) > 6 / math.sqrt(2 * n)
        or abs(within - p) > 6 * math.sqrt(p * (1 - p) / n)
    ):
        raise Fail(
            "randn statistics off: mean %.4g std %.4g within-1-sigma %.4f" % (mean, std, within),
            metrics,
        )
    if torch.unique(x).numel() < n * 0.99:
        raise Fail("randn produced too many repeated values", metrics)
    return timed(
        ctx,
        lambda: torch.randn(n, device=ctx.device, generator=g),
        "mean %.2e, std %.5f, within 1 sigma %.4f" % (mean, std, within),
        metrics,
    )


@kernel_check("kernels.linalg.solve", "linalg.solve (float32)", library="hipSOLVER/cuSOLVER")
def linalg_solve(ctx):
    """torch.linalg.solve of a well-conditioned 128x128 float32 system on the device matches float64.

    Not proven: ill-conditioned or batched systems, other dtypes."""
    torch = ctx.torch
    solve = ctx.require_attr(torch, "linalg.solve")
    a = randn(torch, 128, 128, seed=22) + 32 * torch.eye(128)
    b = randn(torch, 128, 8, seed=23)
    ref = solve(a.double(), b.double())
    return _compared(ctx, solve, [a, b], ref, 1e-4, "solve", "solve 128x128", "lapack")


@kernel_check("kernels.linalg.svd", "linalg.svd (float32)", library="hipSOLVER/cuSOLVER")
def linalg_svd(ctx):
    """Singular values of a 96x64 float32 matrix (torch.linalg.svd) and the reconstruction U S V^T match float64.

    Not proven: large or batched matrices, full_matrices=True, other dtypes."""
    torch = ctx.torch
    svd = ctx.require_attr(torch, "linalg.svd")
    a = randn(torch, 96, 64, seed=24)
    ref_s = (
        torch.linalg.svdvals(a.double()) if hasattr(torch.linalg, "svdvals") else svd(a.double())[1]
    )
    da = a.to(ctx.device)
    u, s, vh = ctx.observe(lambda: svd(da, full_matrices=False), "lapack")
    err = ctx.assert_close(s, ref_s, 1e-4, "svd singular values")
    rec = (u * s.unsqueeze(0)) @ vh
    err_rec = ctx.assert_close(rec, a.double(), 1e-4, "svd reconstruction")
    return timed(
        ctx,
        lambda: svd(da, full_matrices=False),
        "svd 96x64: values %.2e, reconstruction %.2e" % (err, err_rec),
        {"rel_error": max(err, err_rec), "tolerance": 1e-4},
    )


@kernel_check("kernels.linalg.eig", "linalg.eig (float32)", library="MAGMA/cuSOLVER", version=2)
def linalg_eig(ctx):
    """torch.linalg.eig of a general 64x64 float32 matrix: A V = V diag(L) holds to 1e-4, and the spectrum matches float64.
    What PyTorch calls (aten/src/ATen/native/cuda/linalg/BatchLinearAlgebra.cpp, linalg_eig_kernel): cuSOLVER's
    Xgeev on CUDA builds with cuSOLVER >= 11.7.2, else MAGMA's geev on a copy in host memory; ROCm builds always
    use MAGMA ("hipSolver does not have geev"), never hipSOLVER.

    Not proven: symmetric eigensolvers (eigh), batched input, eigenvector phase conventions."""
    torch = ctx.torch
    eig = ctx.require_attr(torch, "linalg.eig")
    a = randn(torch, 64, 64, seed=25)
    da = a.to(ctx.device)
    w, v = attempt("linalg.eig on %s" % ctx.device, lambda: ctx.observe(lambda: eig(da), "lapack"))
    w, v = w.cpu().to(torch.complex128), v.cpu().to(torch.complex128)
    ac = a.double().to(torch.complex128)
    av, vl = torch.view_as_real(ac @ v), torch.view_as_real(v * w.unsqueeze(0))
    err = ctx.assert_close(av, vl, 1e-4, "eig residual A V - V L")
    ref_w = eig(a.double())[0]
    err_w = ctx.assert_close(
        torch.sort(w.abs())[0], torch.sort(ref_w.abs())[0], 1e-4, "eigenvalue magnitudes"
    )
    return timed(
        ctx,
        lambda: eig(da),
        "eig 64x64: residual %.2e, |eigenvalues| %.2e" % (err, err_w),
        {"rel_error": max(err, err_w), "tolerance": 1e-4},
    )


@kernel_check("kernels.sparse.mm", "sparse matmul (COO x dense)", library="hipSPARSE/cuSPARSE")
def sparse_mm(ctx):
    """torch.sparse.mm of a 512x512 COO matrix (5% dense) with a 512x64 float32 matrix matches the dense float64 product.

    Not proven: CSR/CSC formats, sparse-sparse products, or the backward pass."""
    torch = ctx.torch
    g = torch.Generator().manual_seed(26)
    nnz = 512 * 512 // 20
    idx = torch.randint(0, 512, (2, nnz), generator=g)
    val = torch.randn(nnz, generator=g)
    sp = torch.sparse_coo_tensor(idx, val, (512, 512)).coalesce()
    d = randn(torch, 512, 64, seed=27)
    ref = sp.to_dense().double() @ d.double()
    dsp, dd = sp.to(ctx.device), d.to(ctx.device)
    got = attempt(
        "sparse.mm on %s" % ctx.device, lambda: ctx.observe(lambda: torch.sparse.mm(dsp, dd))
    )
    err = ctx.assert_close(got, ref, 1e-4, "sparse mm")
    return timed(
        ctx,
        lambda: torch.sparse.mm(dsp, dd),
        "sparse mm nnz %d: rel err %.2e" % (sp._nnz(), err),
        {"rel_error": err, "tolerance": 1e-4, "nnz": int(sp._nnz())},
    )


@kernel_check("kernels.layer_norm.fp32", "layer norm (float32)")
def layer_norm(ctx):
    """torch.nn.functional.layer_norm over 512 features (with affine weight and bias) matches float64.

    Not proven: other normalisations (batch, group, RMS) or the backward pass."""
    torch = ctx.torch

    def norm(x, w, b):
        return torch.nn.functional.layer_norm(x, (512,), w, b)

    x = randn(torch, 64, 512, seed=28) * 3 + 1
    w, b = randn(torch, 512, seed=29), randn(torch, 512, seed=30)
    ref = norm(x.double(), w.double(), b.double())
    return _compared(ctx, norm, [x, w, b], ref, 1e-4, "layer_norm", "layer_norm 64x512")


@kernel_check("kernels.softmax.fp32", "softmax (float32)")
def softmax(ctx):
    """torch.softmax over rows of 1024 float32 logits (range +-24) matches float64.

    Not proven: other dims, log_softmax, or half-precision inputs."""
    torch = ctx.torch
    x = randn(torch, 64, 1024, seed=31) * 8
    ref = torch.softmax(x.double(), dim=-1)
    return _compared(
        ctx, lambda t: torch.softmax(t, dim=-1), [x], ref, 1e-4, "softmax", "softmax 64x1024"
    )
