"""features: the tensor data types of the seed table. Each dtype is created on
the device under test, multiplied element-wise and compared with a float64 /
int64 CPU reference; quantized dtypes are quantized and dequantized."""

from __future__ import annotations

from ..context import Fail, Partial, Report, Unsupported
from ._common import _first_line, attempt, gen, missing_feature
from .features import feature_check

# dtype -> relative tolerance of one product computed in that dtype
_FLOAT = (
    ("float8_e4m3fn", 0.07),
    ("float8_e5m2", 0.13),
    ("float16", 2e-3),
    ("bfloat16", 1e-2),
    ("float32", 1e-6),
    ("float64", 1e-14),
)
_COMPLEX = (("complex32", 2e-3), ("complex64", 1e-6), ("complex128", 1e-14))
# dtype -> (low, high) for random values whose products cannot overflow
_INT = (
    ("uint8", (0, 16)),
    ("uint16", (0, 250)),
    ("uint32", (0, 60000)),
    ("uint64", (0, 1 << 31)),
    ("int8", (-11, 12)),
    ("int16", (-181, 182)),
    ("int32", (-46340, 46341)),
    ("int64", (-(1 << 31), 1 << 31)),
)
_QUANT = (("quint8", 0.05, 128), ("qint8", 0.05, 0), ("qint32", 0.001, 0), ("quint4x2", 0.5, 0))


def _dtype(torch, name):
    dt = getattr(torch, name, None)
    if dt is None or not isinstance(dt, torch.dtype):
        raise Unsupported("torch has no dtype torch.%s" % name)
    return dt


class _SubOps:
    """The operations a dtype check tries beyond creating the dtype. An operation that
    says it is not implemented is recorded (the dtype is then ``partial``); a wrong
    result fails the check; any other error propagates (a failure)."""

    def __init__(self, ctx, name):
        self.ctx, self.name = ctx, name
        self.missing = []  # type: list
        self.worked = []  # type: list

    def run(self, op, fn):
        try:
            value = fn()
        except Exception as exc:
            if not missing_feature(exc):
                raise
            self.missing.append("%s (%s: %s)" % (op, type(exc).__name__, _first_line(exc)[:120]))
            return None
        self.worked.append(op)
        return value

    def arithmetic(self, d, ref, dt, compare):
        """Multiply and add ``d`` (of dtype ``dt``), each result against ``ref`` squared and
        doubled: ``compare(op, got, want)`` for each that ran; {op: what compare returned}."""
        out = {}
        for op, f, want in (
            ("multiply", lambda: d * d, ref * ref),
            ("add", lambda: d + d, ref + ref),
        ):
            got = self.run(op, f)
            if got is None:
                continue
            if got.dtype != dt:
                raise Fail("%s %s %s produced %s" % (self.name, op, self.name, got.dtype))
            out[op] = compare(op, got, want)
        return out

    def outcome(self, message, metrics):
        metrics = dict(
            metrics,
            worked=",".join(self.worked),
            not_implemented=";".join(self.missing)[:1000],
            device=self.ctx.device,
        )
        if self.missing:
            raise Partial(
                "partial support: %s on %s works for %s; not implemented: %s"
                % (
                    self.name,
                    self.ctx.device,
                    ", ".join(["create", *self.worked]) or "nothing",
                    "; ".join(self.missing),
                ),
                metrics,
            )
        return Report(message, metrics)


def _float_check(name, tol):
    def fn(ctx):
        torch = ctx.torch
        dt = _dtype(torch, name)
        x = torch.randn(4096, generator=gen(torch, 40)) * 4
        d = attempt("create %s on %s" % (name, ctx.device), lambda: x.to(ctx.device).to(dt))
        if d.dtype != dt:
            raise Fail("conversion produced %s" % d.dtype)
        back = d.to(torch.float64).cpu()
        rt = ctx.rel_error(back, x.double())
        if rt > 2 * tol + 1e-7:
            raise Fail(
                "%s round trip lost too much: rel err %.2e" % (name, rt), {"round_trip_error": rt}
            )
        ops = _SubOps(ctx, name)

        def close(op, got, ref):
            return ctx.assert_close(got.to(torch.float64), ref, tol, "%s %s" % (name, op))

        errs = ops.arithmetic(d, back, dt, close)
        return ops.outcome(
            "%s on %s: multiply and add within %.0e (rel err %s), round trip %.2e"
            % (name, ctx.device, tol, ", ".join("%s %.2e" % kv for kv in sorted(errs.items())), rt),
            {
                "rel_error": max(errs.values()) if errs else None,
                "tolerance": tol,
                "round_trip_error": rt,
                "itemsize": torch.empty(0, dtype=dt).element_size(),
            },
        )

    fn.__doc__ = (
        "torch.%s tensors are created on the device, converted back, multiplied and added; both results "
        "match the float64 result of the stored values within %.0e. An operation that is not implemented "
        "for the dtype makes it partial, naming the operation.\n\nNot proven: other operations "
        "(reductions, matmul, indexing), autocast or torch.compile with this dtype." % (name, tol)
    )
    return fn


def _complex_check(name, tol):
    def fn(ctx):
        torch = ctx.torch
        dt = _dtype(torch, name)
        g = gen(torch, 41)
        x = torch.complex(torch.randn(2048, generator=g), torch.randn(2048, generator=g))
        d = attempt("create %s on %s" % (name, ctx.device), lambda: x.to(ctx.device).to(dt))
        back = d.to(torch.complex128).cpu()
        ops = _SubOps(ctx, name)

        def close(op, got, ref):
            real = torch.view_as_real(got.to(torch.complex128).cpu())
            return ctx.assert_close(real, torch.view_as_real(ref), tol, "%s %s" % (name, op))

        errs = ops.arithmetic(d, back, dt, close)
        return ops.outcome(
            "%s on %s: multiply and add within %.0e (rel err %s)"
            % (name, ctx.device, tol, ", ".join("%s %.2e" % kv for kv in sorted(errs.items()))),
            {"rel_error": max(errs.values()) if errs else None, "tolerance": tol},
        )

    fn.__doc__ = (
        "torch.%s tensors are created on the device, multiplied and added; the complex results match "
        "complex128 within %.0e; an operation not implemented for the dtype makes it partial."
        "\n\nNot proven: other operations (FFT, matmul, reductions) in this dtype." % (name, tol)
    )
    return fn


def _int_check(name, bounds):
    lo, hi = bounds

    def fn(ctx):
        torch = ctx.torch
        dt = _dtype(torch, name)
        x = torch.randint(lo, hi, (4096,), generator=gen(torch, 42), dtype=torch.int64)
        d = attempt("create %s on %s" % (name, ctx.device), lambda: x.to(ctx.device).to(dt))
        ops = _SubOps(ctx, name)

        def exact(op, got, ref):
            back = attempt("convert %s back to int64" % name, lambda: got.cpu().to(torch.int64))
            wrong = int((back != ref).sum())
            if wrong:
                raise Fail(
                    "%s: %d of %d results differ from int64" % (op, wrong, x.numel()),
                    {"wrong": wrong},
                )

        ops.arithmetic(d, x, dt, exact)
        return ops.outcome(
            "%s on %s: 4096 products and sums exact" % (name, ctx.device), {"wrong": 0}
        )

    fn.__doc__ = (
        "torch.%s tensors are created on the device, multiplied and added; every result equals the "
        "int64 result exactly; an operation not implemented for the dtype makes it partial."
        "\n\nNot proven: division, shifts, reductions or indexing with this dtype." % name
    )
    return fn


def _quant_check(name, scale, zero_point):
    def fn(ctx):
        torch = ctx.torch
        dt = _dtype(torch, name)
        q = ctx.require_attr(torch, "quantize_per_tensor")
        x = torch.randn(4096, generator=gen(torch, 43)) * 3
        if name.startswith("quint"):
            x = x.abs()
        qmin, qmax = {
            "quint8": (0, 255),
            "qint8": (-128, 127),
            "qint32": (-(1 << 31), (1 << 31) - 1),
            "quint4x2": (0, 15),
        }[name]
        dx = x.to(ctx.device)
        qt = attempt(
            "quantize_per_tensor(%s) on %s" % (name, ctx.device),
            lambda: q(dx, scale, zero_point, dt),
        )
        if qt.dtype != dt:
            raise Fail("quantize_per_tensor produced %s" % qt.dtype)
        ints = attempt("int_repr of %s" % name, lambda: qt.int_repr().cpu().to(torch.int64))
        want = torch.clamp(torch.round(x.double() / scale) + zero_point, qmin, qmax).to(torch.int64)
        if name == "quint4x2":  # two 4-bit values per byte: compare the dequantized values only
            wrong = 0
        else:
            wrong = int(((ints - want).abs() > 1).sum())  # +-1: float32 vs float64 rounding at .5
        if wrong:
            raise Fail(
                "%d of %d quantized values differ from round(x/scale)+zp" % (wrong, x.numel())
            )
        deq = qt.dequantize().cpu()
        ref = (want - zero_point).double() * scale
        err = ctx.assert_close(deq, ref, 1e-3, "%s dequantize" % name)
        return Report(
            "%s on %s: quantize/dequantize rel err %.2e" % (name, ctx.device, err),
            {"rel_error": err, "scale": scale, "zero_point": zero_point, "device": ctx.device},
        )

    fn.__doc__ = (
        "torch.quantize_per_tensor to torch.%s on the device gives round(x/scale)+zero_point "
        "and dequantizes back to the float64 reference.\n\nNot proven: quantized operators "
        "(quantized conv / linear), per-channel quantization or quantized kernels' speed." % name
    )
    return fn


for _make, _table in ((_float_check, _FLOAT), (_complex_check, _COMPLEX), (_int_check, _INT)):
    for _name, _arg in _table:
        feature_check("features.dtype." + _name, "torch." + _name, version=2)(_make(_name, _arg))


@feature_check("features.dtype.bool", "torch.bool")
def dtype_bool(ctx):
    """torch.bool tensors on the device: logical and / xor / not equal the CPU truth table exactly.

    Not proven: bool indexing, masked ops or reductions on the device."""
    torch = ctx.torch
    g = gen(torch, 44)
    a = torch.randint(0, 2, (4096,), generator=g).bool()
    b = torch.randint(0, 2, (4096,), generator=g).bool()
    da, db = a.to(ctx.device), b.to(ctx.device)
    got = [(da & db).cpu(), (da ^ db).cpu(), (~da).cpu(), (da * db).cpu()]
    want = [a & b, a ^ b, ~a, a & b]
    for g_, w in zip(got, want):
        if g_.dtype != torch.bool or not torch.equal(g_, w):
            raise Fail("boolean op result differs from the CPU truth table")
    return Report("bool on %s: and/xor/not/mul exact" % ctx.device, {"device": ctx.device})


for _name, _scale, _zp in _QUANT:
    feature_check("features.dtype." + _name, "torch." + _name)(_quant_check(_name, _scale, _zp))
