"""tensorflow: devices, a matmul and a convolution against NumPy float64, the
Keras mixed precision policy and XLA compilation (tf.function(jit_compile=True))."""

from __future__ import annotations

import time

from ..context import Fail, Report
from ..registry import check, checks_of, suite
from ._common import TIMING_BUDGET_S

tf_kernel = checks_of("kernel", "tensorflow", unit="s")

suite(
    "tensorflow",
    "tensorflow",
    "TensorFlow: devices, matmul/conv numerics vs NumPy float64, mixed precision, XLA.",
)


def _close(np, got, ref, tol, what):
    """Relative error in the Frobenius norm, in float64; the reference must not be all zeros."""
    ref = np.asarray(ref, dtype=np.float64)
    denom = float(np.linalg.norm(ref))
    if denom == 0.0 or denom != denom:
        raise Fail("reference is all zeros or NaN: the comparison would prove nothing")
    err = float(np.linalg.norm(np.asarray(got, dtype=np.float64) - ref)) / denom
    if not err <= tol:
        raise Fail(
            "%s: relative error %.3e exceeds tolerance %.1e" % (what, err, tol),
            {"rel_error": err, "tolerance": tol},
        )
    return err


def _gpus(tf):
    return tf.config.list_physical_devices("GPU")


def _placed(ctx, tensor):
    """Record where TensorFlow placed an op's output: the device, and "cpu" as the
    library on the CPU (on a GPU the library is not proven: no kernel names)."""
    dev = str(getattr(tensor, "device", "") or "")
    if "GPU" in dev.upper():
        ctx.claim(
            device="tensorflow " + dev.split("device:")[-1],
            source="TensorFlow placed the op on %s; its kernels' library is not recorded" % dev,
        )
    else:
        ctx.claim(
            library="cpu",
            device="cpu",
            source="TensorFlow placed the op on %s" % (dev or "the CPU"),
        )


def _timed(ctx, tf, np, op, ref, what):
    """``op()`` (one TensorFlow op) against the NumPy float64 ``ref``, where TensorFlow placed
    it recorded, then timed."""
    out = op()
    _placed(ctx, out)
    tol = 5e-3 if _gpus(tf) else 1e-4
    err = _close(np, out.numpy(), ref, tol, what)
    samples = ctx.timeit(lambda: op().numpy(), budget_s=TIMING_BUDGET_S)
    return Report(
        "rel err %.2e (tol %.0e)" % (err, tol),
        {"rel_error": err, "tolerance": tol},
        samples=samples,
        unit="s",
    )


@check("tf.devices", "TensorFlow devices", "feature", "tensorflow")
def devices(ctx):
    """tf.config lists the physical devices, a tensor can be placed on each, and a GPU image sees its GPU.

    Not proven: that the GPU computes correctly (the other tf checks do), multi-GPU strategies."""
    tf = ctx.load("tensorflow")
    phys = tf.config.list_physical_devices()
    logical = tf.config.list_logical_devices()
    placed = []
    for d in logical:
        with tf.device(d.name):
            t = tf.constant([1.0, 2.0]) * 2.0
        placed.append(t.device)
    gpus = _gpus(tf)
    backend = ctx.expect.get("backend", "cpu")
    metrics = {
        "physical": [d.name for d in phys],
        "gpus": len(gpus),
        "placed": placed,
        "built_with_cuda": bool(tf.test.is_built_with_cuda()),
        "built_with_rocm": bool(getattr(tf.test, "is_built_with_rocm", lambda: False)()),
    }
    if backend in ("rocm", "cuda") and ctx.device_mode != "cpu" and not gpus:
        raise Fail("%s image, but TensorFlow lists no GPU" % backend, metrics)
    return Report("%d device(s): %s" % (len(phys), ", ".join(d.device_type for d in phys)), metrics)


@tf_kernel("tf.matmul.fp32", "TensorFlow matmul (float32)", library="hipBLAS/cuBLAS")
def matmul(ctx):
    """tf.linalg.matmul of 256x256 float32 matrices matches the NumPy float64 product, and is timed; the result
    records where TensorFlow placed the op.

    Not proven: which BLAS ran on a GPU (TensorFlow's kernel names are not recorded), other dtypes or shapes."""
    tf, np = ctx.load("tensorflow"), ctx.load("numpy")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 256)).astype(np.float32)
    b = rng.standard_normal((256, 256)).astype(np.float32)
    ta, tb = tf.constant(a), tf.constant(b)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    return _timed(ctx, tf, np, lambda: tf.linalg.matmul(ta, tb), ref, "tf matmul")


def _conv_ref(np, x, w):
    """NHWC, HWIO, stride 1, SAME padding, in float64."""
    kh, kw = w.shape[0], w.shape[1]
    xp = np.pad(x.astype(np.float64), ((0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)))
    n, h, wd, _ = x.shape
    out = np.zeros((n, h, wd, w.shape[3]))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum(
                "nhwc,co->nhwo", xp[:, i : i + h, j : j + wd, :], w[i, j].astype(np.float64)
            )
    return out


@tf_kernel("tf.conv2d.fp32", "TensorFlow conv2d (float32)", library="MIOpen/cuDNN")
def conv2d(ctx):
    """tf.nn.conv2d (3x3, SAME, NHWC float32) matches a NumPy float64 convolution, and is timed; the result records
    where TensorFlow placed the op (a CPU run names no GPU library).

    Not proven: that MIOpen / cuDNN ran on a GPU (not recorded), other layouts or strides."""
    tf, np = ctx.load("tensorflow"), ctx.load("numpy")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 32, 32, 8)).astype(np.float32)
    w = rng.standard_normal((3, 3, 8, 16)).astype(np.float32)
    tx, tw = tf.constant(x), tf.constant(w)
    ref = _conv_ref(np, x, w)
    return _timed(
        ctx, tf, np, lambda: tf.nn.conv2d(tx, tw, strides=1, padding="SAME"), ref, "tf conv2d"
    )


@check("tf.mixed_precision.policy", "TensorFlow mixed precision", "feature", "tensorflow")
def mixed_precision(ctx):
    """Under the Keras mixed policy (float16 on a GPU, bfloat16 on the CPU) a Dense layer keeps float32
    weights, computes in the low precision and matches float64 within its tolerance.

    Not proven: loss scaling, training, or layers other than Dense."""
    tf, np = ctx.load("tensorflow"), ctx.load("numpy")
    mp = ctx.require_attr(tf, "keras.mixed_precision")
    low, policy = ("float16", "mixed_float16") if _gpus(tf) else ("bfloat16", "mixed_bfloat16")
    old = mp.global_policy()
    mp.set_global_policy(policy)
    try:
        layer = tf.keras.layers.Dense(
            64, kernel_initializer="glorot_uniform", bias_initializer="ones"
        )
        rng = np.random.default_rng(2)
        x = rng.standard_normal((32, 128)).astype(np.float32)
        y = layer(tf.constant(x))
        _placed(ctx, y)
        kdtype = layer.kernel.dtype
        kdtype = getattr(kdtype, "name", kdtype)
        ydtype = getattr(y.dtype, "name", str(y.dtype))
        k = np.asarray(layer.kernel.numpy(), dtype=np.float64)
        bias = np.asarray(layer.bias.numpy(), dtype=np.float64)
    finally:
        mp.set_global_policy(old)
    metrics = {"policy": policy, "kernel_dtype": str(kdtype), "output_dtype": ydtype}
    if str(kdtype) != "float32" or ydtype != low:
        raise Fail(
            "policy %s: kernel %s, output %s (want float32 / %s)" % (policy, kdtype, ydtype, low),
            metrics,
        )
    tol = 3e-2 if low == "bfloat16" else 5e-3
    err = _close(
        np, y.numpy().astype(np.float64), x.astype(np.float64) @ k + bias, tol, "mixed Dense"
    )
    metrics["rel_error"] = err
    return Report("%s: float32 weights, %s compute, rel err %.1e" % (policy, low, err), metrics)


@check(
    "tf.xla.jit_compile",
    "TensorFlow XLA (jit_compile)",
    "compile",
    "tensorflow",
    library="XLA",
    unit="s",
)
def xla(ctx):
    """tf.function(jit_compile=True) compiles a small MLP step with XLA; the result matches NumPy float64 and
    the first call's compile time is stored as compile_s.

    Not proven: XLA auto-clustering, larger models, or that XLA is faster."""
    tf, np = ctx.load("tensorflow"), ctx.load("numpy")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 128)).astype(np.float32)
    w1 = (rng.standard_normal((128, 96)) / 10).astype(np.float32)
    w2 = (rng.standard_normal((96, 10)) / 10).astype(np.float32)

    @tf.function(jit_compile=True)
    def step(x, w1, w2):
        h = tf.nn.relu(tf.linalg.matmul(x, w1))
        return tf.nn.softmax(tf.linalg.matmul(h, w2), axis=-1)

    args = (tf.constant(x), tf.constant(w1), tf.constant(w2))
    t0 = time.perf_counter()
    out = step(*args)
    got = out.numpy()
    compile_s = time.perf_counter() - t0
    _placed(ctx, out)
    hlo_ops = None
    if hasattr(step, "experimental_get_compiler_ir"):
        hlo = step.experimental_get_compiler_ir(*args)(stage="hlo")
        if "HloModule" not in hlo:
            raise Fail("experimental_get_compiler_ir returned no HLO module: %s" % hlo[:200])
        hlo_ops = hlo.count("\n")
    h = np.maximum(x.astype(np.float64) @ w1.astype(np.float64), 0.0)
    z = h @ w2.astype(np.float64)
    z = np.exp(z - z.max(axis=-1, keepdims=True))
    ref = z / z.sum(axis=-1, keepdims=True)
    tol = 5e-3 if _gpus(tf) else 1e-4
    err = _close(np, got, ref, tol, "XLA step")
    samples = ctx.timeit(lambda: step(*args).numpy(), budget_s=TIMING_BUDGET_S)
    return Report(
        "XLA compiled in %.2f s, rel err %.1e" % (compile_s, err),
        {"compile_s": compile_s, "rel_error": err, "tolerance": tol, "hlo_lines": hlo_ops},
        samples=samples,
        unit="s",
    )
