"""features: torch.backends.cuda / torch.backends.cudnn flags and automatic
mixed precision (torch.amp) rows of the seed tables."""

from __future__ import annotations

import copy
import functools
import json
import os
import subprocess
import sys
from typing import Dict

from .. import evidence
from ..context import Fail, Report, Skip, Unsupported
from . import _sdpa
from ._common import attempt, has, randn
from .features import gpu_feature, restoring


@gpu_feature(
    "features.backends.cufft_plan_cache",
    "torch.backends.cuda.cufft_plan_cache",
    library="hipFFT/cuFFT",
)
def cufft_plan_cache(ctx):
    """The GPU FFT plan cache fills on an FFT, honours max_size and empties on clear(); the FFT is correct.

    Not proven: the cache's effect on speed, or plan caching for other FFT sizes."""
    torch = ctx.torch
    mgr = ctx.require_attr(torch, "backends.cuda.cufft_plan_cache")
    ctx.require_gpu()
    cache = mgr[torch.cuda.current_device()] if hasattr(mgr, "__getitem__") else mgr
    old = cache.max_size
    try:
        cache.clear()
        cache.max_size = 4
        x = randn(torch, 16, 256, seed=61)
        for n in (256, 128, 64):
            got = torch.view_as_real(torch.fft.rfft(x[:, :n].cuda()))
            want = torch.view_as_real(torch.fft.rfft(x[:, :n].double()))
            ctx.assert_close(got, want, 1e-4, "rfft %d" % n)
        size = cache.size
        if size < 1 or size > 4:
            raise Fail("plan cache size %d after 3 distinct FFTs with max_size 4" % size)
        cache.clear()
        if cache.size != 0:
            raise Fail("plan cache not empty after clear()")
        return Report("cache held %d plan(s) (max 4), cleared" % size, {"cached_plans": size})
    finally:
        cache.max_size = old


def _gemm_flag(ctx, attr, dtype_name, n, tol_on, tol_off, effect_required, shape=None):
    """``shape`` (m, k, n) when not square. ``effect_required``: a flag with no observable effect
    is unsupported (the device has no such path); None: a flag whose effect depends on the
    library's kernel choice, so bit-identical results are skip "not measurable", never a pass."""
    torch = ctx.torch
    matmul = ctx.require_attr(torch, "backends.cuda.matmul")
    if not has(matmul, attr):
        raise Unsupported("torch.backends.cuda.matmul has no attribute %s" % attr)
    ctx.require_gpu()
    dt = getattr(torch, dtype_name)
    m, k, n2 = shape or (n, n, n)
    a, b = randn(torch, m, k, seed=62).to(dt), randn(torch, k, n2, seed=63).to(dt)
    ref = a.double() @ b.double()
    da, db = a.cuda(), b.cuda()
    out = {}
    with restoring(matmul, attr):
        for value in (True, False):
            setattr(matmul, attr, value)
            if getattr(matmul, attr) != value:
                raise Fail("setting %s=%s did not stick" % (attr, value))
            out[value] = da @ db
            torch.cuda.synchronize()
    e_on = ctx.assert_close(out[True], ref, tol_on, "%s=True" % attr)
    e_off = ctx.assert_close(out[False], ref, tol_off, "%s=False" % attr)
    differ = not torch.equal(out[True], out[False])
    metrics = {"rel_error_on": e_on, "rel_error_off": e_off, "results_differ": differ}
    if effect_required and not differ:
        raise Unsupported(
            "%s is accepted but changes nothing: results are bit-identical with it on and off "
            "(no such path on this device)" % attr,
            metrics,
        )
    if not differ:
        raise Skip(
            "not measurable: %s is settable both ways and %dx%dx%d GEMMs stay correct (rel err on "
            "%.1e / off %.1e), but results are bit-identical with it on and off: the library chose "
            "no kernel whose reduction the flag changes" % (attr, m, k, n2, e_on, e_off),
            metrics,
        )
    return Report(
        "%s: rel err on %.1e / off %.1e, results %s"
        % (attr, e_on, e_off, "differ" if differ else "identical"),
        metrics,
    )


@gpu_feature(
    "features.backends.matmul_allow_tf32",
    "torch.backends.cuda.matmul.allow_tf32",
    library="hipBLASLt/cuBLAS",
    version=2,
)
def matmul_allow_tf32(ctx):
    """matmul.allow_tf32 changes float32 GEMM results (TF32 path taken) while staying within TF32 tolerance;
    a flag with no observable effect is reported unsupported (no TF32 path on this device). On a ROCm build
    the flag is off by default: without HIPBLASLT_ALLOW_TF32=1 in the environment its setter is a no-op and
    it reads False (pytorch/pytorch aten/src/ATen/Context.cpp, setAllowTF32CuBLAS / allowTF32CuBLAS, since
    2.7), so there the same GEMMs are run in a child process with the variable set, and the row reports both.

    Not proven: TF32 speed-ups, or TF32 in other ops than a 1024x1024 GEMM."""
    torch = ctx.torch
    if ctx.vendor == "amd" and os.environ.get(TF32_ENV, "").upper() not in _ENV_TRUE:
        matmul = ctx.require_attr(torch, "backends.cuda.matmul")
        ctx.require_gpu()
        with restoring(matmul, "allow_tf32"):
            matmul.allow_tf32 = True
            gated = not matmul.allow_tf32
        if gated:
            return _tf32_in_child(ctx)
    return _gemm_flag(ctx, "allow_tf32", "float32", 1024, 5e-3, 1e-4, True)


TF32_ENV = "HIPBLASLT_ALLOW_TF32"
_ENV_TRUE = ("1", "ON", "YES", "TRUE")  # c10::utils::check_env's true values
_TF32_CHILD = r"""
import json, torch
m = torch.backends.cuda.matmul
def gemm(on):
    m.allow_tf32 = on
    stuck = m.allow_tf32 == on
    a = torch.randn(1024, 1024, generator=torch.Generator().manual_seed(62))
    b = torch.randn(1024, 1024, generator=torch.Generator().manual_seed(63))
    ref = a.double() @ b.double()
    got = a.cuda() @ b.cuda()
    torch.cuda.synchronize()
    err = float((got.detach().to("cpu").double() - ref).norm()) / float(ref.norm())
    return stuck, err, got.detach().to("cpu")
s_on, e_on, on = gemm(True)
s_off, e_off, off = gemm(False)
print("VALORCH_TF32 " + json.dumps({"sticks": s_on and s_off, "rel_error_on": e_on,
      "rel_error_off": e_off, "results_differ": not torch.equal(on, off)}))
"""


def _tf32_in_child(ctx):
    """The flag under HIPBLASLT_ALLOW_TF32=1, in a fresh process (torch reads it once)."""
    env = dict(os.environ, **{TF32_ENV: "1"})
    proc = subprocess.run(
        [sys.executable, "-c", _TF32_CHILD], capture_output=True, timeout=300, env=env
    )
    out = proc.stdout.decode("utf-8", "replace")
    found = [ln for ln in out.splitlines() if ln.startswith("VALORCH_TF32 ")]
    default = (
        "off by default on ROCm: without %s=1 setting matmul.allow_tf32 is a no-op and it reads "
        "False (aten/src/ATen/Context.cpp)" % TF32_ENV
    )
    if proc.returncode != 0 or not found:
        raise Fail(
            "%s; with %s=1 the child process failed: %s"
            % (default, TF32_ENV, proc.stderr.decode("utf-8", "replace")[-1200:])
        )
    m = json.loads(found[-1][len("VALORCH_TF32 ") :])
    metrics = dict(m, default_off=True, enabled_by="%s=1" % TF32_ENV)
    if not m["sticks"]:
        raise Unsupported(
            "%s; even with %s=1 the flag does not stick" % (default, TF32_ENV), metrics
        )
    if not m["rel_error_off"] <= 1e-4 or not m["rel_error_on"] <= 5e-3:
        raise Fail(
            "%s; with %s=1 a GEMM is outside tolerance (rel err on %.1e / off %.1e)"
            % (default, TF32_ENV, m["rel_error_on"], m["rel_error_off"]),
            metrics,
        )
    if not m["results_differ"]:
        raise Unsupported(
            "%s; with %s=1 the flag sticks but changes nothing: results are bit-identical "
            "(no TF32 path on this device)" % (default, TF32_ENV),
            metrics,
        )
    return Report(
        "%s; available with %s=1 (verified in a child process): TF32 GEMM rel err %.1e, "
        "off %.1e" % (default, TF32_ENV, m["rel_error_on"], m["rel_error_off"]),
        metrics,
    )


def _reduced_flag(short: str, dtype_name: str, tol_on: float, tol_off: float) -> None:
    attr = "allow_%s_reduced_precision_reduction" % short

    def fn(ctx):
        return _gemm_flag(ctx, attr, dtype_name, 0, tol_on, tol_off, None, shape=(64, 16384, 64))

    fn.__doc__ = (
        "The %s reduced-precision-reduction flag is settable both ways and %s GEMMs stay correct "
        "under each, on a split-K shape (64x16384 @ 16384x64: small M and N, long K), the only kind "
        "of GEMM where cuBLAS's flag changes the reduction (it allows reduced-precision reduction of "
        "split-K partial sums, CUBLAS_MATH_DISALLOW_REDUCED_ PRECISION_REDUCTION). A pass needs the "
        "results to differ with it on and off (the flag changed the reduction); bit-identical "
        'results are skip "not measurable": the library\'s kernel choice decides whether a split-K '
        "path runs at all.\n\nNot proven: speed, or the flag's effect on other shapes."
    ) % (short, dtype_name)
    gpu_feature(
        "features.backends.matmul_%s_reduced" % short,
        "torch.backends.cuda.matmul." + attr,
        library="hipBLAS/cuBLAS",
        version=4,
    )(fn)


_reduced_flag("fp16", "float16", 1e-2, 5e-3)
_reduced_flag("bf16", "bfloat16", 5e-2, 3e-2)


_SDP = ("cudnn", "flash", "mem_efficient", "math")


def _sdp_backend(ctx, which):
    torch = ctx.torch
    bc = ctx.require_attr(torch, "backends.cuda")
    for name in ("enable_%s_sdp" % which, "%s_sdp_enabled" % which):
        if not has(bc, name):
            raise Unsupported("torch.backends.cuda has no %s" % name)
    sdpa = ctx.require_attr(torch, "nn.functional.scaled_dot_product_attention")
    ctx.require_gpu()
    q, k, v = _sdpa.inputs(torch, (2, 4, 128, 64), (64, 65, 66))
    present = [w for w in _SDP if has(bc, "enable_%s_sdp" % w)]
    saved = {w: getattr(bc, "%s_sdp_enabled" % w)() for w in present}
    tried = []
    try:
        for w in present:
            getattr(bc, "enable_%s_sdp" % w)(w == which)
        if not getattr(bc, "%s_sdp_enabled" % which)() or any(
            getattr(bc, "%s_sdp_enabled" % w)() for w in present if w != which
        ):
            raise Fail("the enable_*_sdp flags did not take effect")
        for dtype in _sdpa.dtypes_for(which, "cuda"):
            r = _sdpa.run_once(ctx, sdpa, q, k, v, False, dtype, None)
            tried.append(r)
            if r["state"] == "ran":
                break
    finally:
        for w, val in saved.items():
            getattr(bc, "enable_%s_sdp" % w)(val)
    r = tried[-1]
    metrics = {"tried": "; ".join(_sdpa.describe(which, t) for t in tried)[:600]}
    if r["state"] != "ran":
        if r["state"] == "unavailable":
            raise Unsupported(
                "only %s enabled: no kernel ran in %s: %s"
                % (which, "/".join(t["dtype"] for t in tried), r.get("why", "")),
                metrics,
            )
        raise Fail("only %s enabled: %s" % (which, r.get("why", "")), metrics)
    metrics.update(
        rel_error=r["rel_error"],
        tolerance=r["tolerance"],
        dtype=r["dtype"],
        ran=",".join(r["backends"]),
    )
    if which not in r["backends"]:
        raise Fail(
            "only %s enabled, yet the profiler recorded %s"
            % (which, ",".join(r["backends"]) or "no SDPA implementation"),
            metrics,
        )
    if not r["rel_error"] <= r["tolerance"]:
        raise Fail(
            "SDPA (%s only, %s): relative error %.3e exceeds %.1e"
            % (which, r["dtype"], r["rel_error"], r["tolerance"]),
            metrics,
        )
    ctx.claim(
        library=evidence.label(r["libraries"]),
        source="torch.profiler kernels: %s" % ";".join(r["kernels"][:4]),
    )
    return Report(
        "SDPA with only %s enabled ran %s in %s: rel err %.1e"
        % (which, which, r["dtype"], r["rel_error"]),
        metrics,
    )


for _w, _lib in (
    ("cudnn", "MIOpen/cuDNN"),
    ("flash", "AOTriton/FlashAttention"),
    ("mem_efficient", "AOTriton/xFormers"),
    ("math", None),
):
    _fn = functools.partial(_sdp_backend, which=_w)
    _fn.__doc__ = (
        "With only the %s SDPA backend enabled (torch.backends.cuda.enable_%s_sdp), scaled_dot_product_"
        "attention runs on the GPU (%s), torch.profiler records the %s implementation and the result "
        "matches float64; 'no available kernel' in every dtype is unsupported.\n\nNot proven: masks, "
        "dropout, backward, or other head sizes."
        % (_w, _w, "/".join(_sdpa.dtypes_for(_w, "cuda")), _w)
    )
    gpu_feature(
        "features.backends.sdp_%s" % _w,
        "torch.backends.cuda.enable_%s_sdp" % _w,
        library=_lib,
        version=2,
    )(_fn)


def _conv_pair(ctx, seed=67):
    torch = ctx.torch
    x, w = randn(torch, 8, 32, 32, 32, seed=seed), randn(torch, 64, 32, 3, 3, seed=seed + 1)
    return x, w, torch.nn.functional.conv2d(x.double(), w.double(), padding=1)


@gpu_feature(
    "features.backends.cudnn_allow_tf32", "torch.backends.cudnn.allow_tf32", library="MIOpen/cuDNN"
)
def cudnn_allow_tf32(ctx):
    """cudnn.allow_tf32 changes float32 convolution results (TF32 path taken) within TF32 tolerance;
    a flag with no observable effect is reported unsupported.

    Not proven: TF32 speed-ups, or TF32 in convolutions other than one 3x3 conv."""
    torch = ctx.torch
    cudnn = ctx.require_attr(torch, "backends.cudnn")
    if not has(cudnn, "allow_tf32"):
        raise Unsupported("torch.backends.cudnn has no allow_tf32")
    ctx.require_gpu()
    x, w, ref = _conv_pair(ctx)
    out = {}
    with restoring(cudnn, "allow_tf32"):
        for value in (True, False):
            cudnn.allow_tf32 = value
            out[value] = torch.nn.functional.conv2d(x.cuda(), w.cuda(), padding=1)
            torch.cuda.synchronize()
    e_on = ctx.assert_close(out[True], ref, 5e-3, "conv allow_tf32=True")
    e_off = ctx.assert_close(out[False], ref, 1e-4, "conv allow_tf32=False")
    metrics = {"rel_error_on": e_on, "rel_error_off": e_off}
    if torch.equal(out[True], out[False]):
        raise Unsupported(
            "cudnn.allow_tf32 is accepted but convolution results are bit-identical with it "
            "on and off (no TF32 path on this device)",
            metrics,
        )
    return Report("conv rel err with TF32 %.1e, without %.1e" % (e_on, e_off), metrics)


@gpu_feature(
    "features.backends.cudnn_deterministic",
    "torch.backends.cudnn.deterministic",
    library="MIOpen/cuDNN",
    version=2,
)
def cudnn_deterministic(ctx):
    """With cudnn.deterministic set, repeated conv2d forward+backward passes give bit-identical outputs
    and gradients, and with it off the same passes differ: the flag is what made them agree. Passes
    identical with it off too prove nothing of the flag: skip "not measurable".

    Not proven: determinism of other ops (scatter, index_add...) or under torch.use_deterministic_algorithms."""
    torch = ctx.torch
    cudnn = ctx.require_attr(torch, "backends.cudnn")
    if not has(cudnn, "deterministic"):
        raise Unsupported("torch.backends.cudnn has no deterministic flag")
    ctx.require_gpu()
    x, w, ref = _conv_pair(ctx, seed=69)
    dx = x.cuda()
    same = {}
    with restoring(cudnn, "deterministic"), restoring(cudnn, "benchmark"):
        for flag in (True, False):
            cudnn.deterministic, cudnn.benchmark = flag, not flag
            runs = []
            for _ in range(3):
                dw = w.cuda().requires_grad_(True)
                y = torch.nn.functional.conv2d(dx, dw, padding=1)
                y.square().sum().backward()
                torch.cuda.synchronize()
                runs.append((y.detach().cpu(), dw.grad.cpu()))
            same[flag] = all(
                torch.equal(runs[0][0], r[0]) and torch.equal(runs[0][1], r[1]) for r in runs[1:]
            )
    return determinism_verdict(same, ctx.assert_close(runs[0][0], ref, 5e-3, "conv"))


def determinism_verdict(same: Dict[bool, bool], err: float) -> Report:
    """``same``: whether repeated passes were bit-identical with cudnn.deterministic on (True)
    and off (False). Identical with it off too: the flag's effect is not measurable."""
    metrics = {"rel_error": err, "identical_on": same[True], "identical_off": same[False]}
    if not same[True]:
        raise Fail("three conv passes with cudnn.deterministic=True differ bitwise", metrics)
    if same[False]:
        raise Skip(
            "not measurable: three conv passes are bit-identical with cudnn.deterministic on and "
            "also off (benchmark on): this convolution is deterministic either way, so the flag's "
            "effect cannot be seen (rel err %.1e)" % err,
            metrics,
        )
    return Report(
        "passes bit-identical with deterministic=True, different with it off; rel err %.1e" % err,
        metrics,
    )


@gpu_feature("features.amp.autocast", "Autocasting", version=2)
def autocast(ctx):
    """Inside torch.autocast("cuda", float16) a matmul on the GPU runs in float16 and stays within 5e-3 of float64.
    The row is GPU autocasting: a host without a GPU skips it (CPU bfloat16 autocast is not this row).

    Not proven: autocast of every op in the cast lists (features.amp.op_specific checks several), or bfloat16
    autocast on the GPU."""
    torch = ctx.torch
    ctx.require_attr(torch, "autocast")
    ctx.require_gpu()
    a, b = randn(torch, 128, 256, seed=70), randn(torch, 256, 64, seed=71)
    da, db = a.cuda(), b.cuda()

    def run():
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            return torch.mm(da, db)

    y = attempt("autocast(cuda, float16)", lambda: ctx.observe(run))
    if y.dtype != torch.float16:
        raise Fail("torch.mm under autocast(cuda) produced %s, expected torch.float16" % y.dtype)
    err = ctx.assert_close(y, a.double() @ b.double(), 5e-3, "autocast mm")
    return Report(
        "autocast(cuda, float16): mm -> %s, rel err %.1e" % (y.dtype, err),
        {"dtype": str(y.dtype), "rel_error": err},
    )


@gpu_feature("features.amp.grad_scaler", "Gradient scaling", version=2)
def grad_scaler(ctx):
    """A CUDA GradScaler scales the loss, unscales gradients to the float64 reference values, steps, and skips
    the step (halving the scale) when a gradient is infinite. GPU-only: a host without a GPU skips it.

    Not proven: scaling with several optimizers, or the scale's growth schedule over many steps."""
    torch = ctx.torch
    if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
        make = functools.partial(torch.amp.GradScaler, "cuda", init_scale=1024.0)
    elif hasattr(getattr(getattr(torch, "cuda", None), "amp", None), "GradScaler"):
        make = functools.partial(torch.cuda.amp.GradScaler, init_scale=1024.0)
    else:
        raise Unsupported("no GradScaler in torch.amp or torch.cuda.amp")
    ctx.require_gpu()
    dev = "cuda"
    scaler = attempt("GradScaler(%s)" % dev, make)
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 4)
    ref_model = copy.deepcopy(model).double()
    x = randn(torch, 32, 16, seed=72)
    ref_model(x.double()).square().mean().backward()
    model = model.to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    w0 = model.weight.detach().clone()
    loss = model(x.to(dev)).square().mean()
    scaled = scaler.scale(loss)
    if abs(float(scaled) / float(loss) - 1024.0) > 1e-3:
        raise Fail("scale(loss) is %.4g x loss, expected 1024" % (float(scaled) / float(loss)))
    scaled.backward()
    scaler.unscale_(opt)
    err = ctx.assert_close(model.weight.grad, ref_model.weight.grad, 1e-5, "unscaled gradient")
    scaler.step(opt)
    scaler.update()
    ctx.assert_close(
        model.weight.detach(), w0.double().cpu() - 0.1 * ref_model.weight.grad, 1e-5, "SGD step"
    )
    # An infinite gradient: the step must be skipped and the scale reduced.
    w1, s1 = model.weight.detach().clone(), scaler.get_scale()
    opt.zero_grad()
    scaler.scale(model(x.to(dev)).sum() * float("inf")).backward()
    scaler.step(opt)
    scaler.update()
    if not torch.equal(model.weight.detach(), w1):
        raise Fail("the optimizer stepped despite an infinite gradient")
    if not scaler.get_scale() < s1:
        raise Fail(
            "scale did not shrink after an infinite gradient (%s -> %s)" % (s1, scaler.get_scale())
        )
    return Report(
        "%s GradScaler: unscaled grad rel err %.1e, inf step skipped, scale %g -> %g"
        % (dev, err, s1, scaler.get_scale()),
        {"device": dev, "rel_error": err},
    )


@gpu_feature("features.amp.op_specific", "CUDA op-specific behavior")
def amp_op_specific(ctx):
    """Under CUDA autocast, mm runs in float16, softmax and layer_norm in float32, and mixed-dtype add promotes
    to float32, whichever namespace the op is called from.

    Not proven: the full autocast op lists, or bfloat16 autocast."""
    torch = ctx.torch
    ctx.require_attr(torch, "autocast")
    ctx.require_gpu()
    a, b = randn(torch, 64, 64, seed=73).cuda(), randn(torch, 64, 64, seed=74).cuda()
    f16, f32 = torch.float16, torch.float32
    with torch.autocast(device_type="cuda", dtype=f16):
        ran = (  # (op, its result, the dtype autocast must give it)
            ("torch.mm", torch.mm(a, b), f16),
            ("Tensor.matmul", a.matmul(b), f16),
            ("nn.functional.linear", torch.nn.functional.linear(a, b), f16),
            ("softmax", torch.softmax(a.half(), dim=-1), f32),
            ("layer_norm", torch.nn.functional.layer_norm(a.half(), (64,)), f32),
            ("add(f16, f32)", a.half() + b, f32),
        )
    wrong = ["%s -> %s (want %s)" % (k, t.dtype, w) for k, t, w in ran if t.dtype != w]
    if wrong:
        raise Fail("autocast op behaviour differs: " + "; ".join(wrong))
    return Report(
        "autocast casts per op as documented (%d ops)" % len(ran),
        {k: str(t.dtype) for k, t, _ in ran},
    )
