"""features: the tensor data types of the seed table. Each dtype is created on
the device under test, multiplied element-wise and compared with a float64 /
int64 CPU reference; quantized dtypes are quantized and dequantized."""

from __future__ import annotations

from ..context import Fail, Report, Unsupported
from ..registry import check
from ._common import attempt, gen

# dtype -> relative tolerance of one product computed in that dtype
_FLOAT = (("float8_e4m3fn", 0.07), ("float8_e5m2", 0.13), ("float16", 2e-3), ("bfloat16", 1e-2),
          ("float32", 1e-6), ("float64", 1e-14))
_COMPLEX = (("complex32", 2e-3), ("complex64", 1e-6), ("complex128", 1e-14))
# dtype -> (low, high) for random values whose products cannot overflow
_INT = (("uint8", (0, 16)), ("uint16", (0, 250)), ("uint32", (0, 60000)), ("uint64", (0, 1 << 31)),
        ("int8", (-11, 12)), ("int16", (-181, 182)), ("int32", (-46340, 46341)),
        ("int64", (-(1 << 31), 1 << 31)))
_QUANT = (("quint8", 0.05, 128), ("qint8", 0.05, 0), ("qint32", 0.001, 0), ("quint4x2", 0.5, 0))


def _dtype(torch, name):
    dt = getattr(torch, name, None)
    if dt is None or not isinstance(dt, torch.dtype):
        raise Unsupported("torch has no dtype torch.%s" % name)
    return dt


def _extra_add(torch, t):
    """Does add work too? (recorded, not required: the seed notes that some
    dtypes have limited eager support)."""
    try:
        t + t
        return True
    except Exception:
        return False


def _float_check(name, tol):
    def fn(ctx):
        torch = ctx.torch
        dt = _dtype(torch, name)
        x = torch.randn(4096, generator=gen(torch, 40)) * 4
        d = attempt("create %s on %s" % (name, ctx.device), lambda: x.to(ctx.device).to(dt))
        if d.dtype != dt:
            raise Fail("conversion produced %s" % d.dtype)
        back = d.to(torch.float64).cpu()
        ref = back * back  # the float64 product of the values as stored in the dtype
        got = attempt("multiply %s on %s" % (name, ctx.device), lambda: d * d)
        if got.dtype != dt:
            raise Fail("%s * %s produced %s" % (name, name, got.dtype))
        err = ctx.assert_close(got.to(torch.float64), ref, tol, "%s multiply" % name)
        rt = ctx.rel_error(back, x.double())
        if rt > 2 * tol + 1e-7:
            raise Fail("%s round trip lost too much: rel err %.2e" % (name, rt), {"round_trip_error": rt})
        add = _extra_add(torch, d)
        return Report("%s on %s: multiply rel err %.2e (tol %.0e), round trip %.2e, add %s"
                      % (name, ctx.device, err, tol, rt, "works" if add else "not implemented"),
                      {"rel_error": err, "tolerance": tol, "round_trip_error": rt, "add": add,
                       "itemsize": torch.empty(0, dtype=dt).element_size(), "device": ctx.device})
    fn.__doc__ = ("torch.%s tensors are created on the device and multiplied; the product matches the "
                  "float64 product of the stored values within %.0e." % (name, tol))
    return fn


def _complex_check(name, tol):
    def fn(ctx):
        torch = ctx.torch
        dt = _dtype(torch, name)
        g = gen(torch, 41)
        x = torch.complex(torch.randn(2048, generator=g), torch.randn(2048, generator=g))
        d = attempt("create %s on %s" % (name, ctx.device), lambda: x.to(ctx.device).to(dt))
        back = d.to(torch.complex128).cpu()
        got = attempt("multiply %s on %s" % (name, ctx.device), lambda: d * d)
        if got.dtype != dt:
            raise Fail("%s * %s produced %s" % (name, name, got.dtype))
        err = ctx.assert_close(torch.view_as_real(got.to(torch.complex128).cpu()),
                               torch.view_as_real(back * back), tol, "%s multiply" % name)
        add = _extra_add(torch, d)
        return Report("%s on %s: multiply rel err %.2e (tol %.0e), add %s"
                      % (name, ctx.device, err, tol, "works" if add else "not implemented"),
                      {"rel_error": err, "tolerance": tol, "add": add, "device": ctx.device})
    fn.__doc__ = ("torch.%s tensors are created on the device and multiplied; the complex product "
                  "matches complex128 within %.0e." % (name, tol))
    return fn


def _int_check(name, lo, hi):
    def fn(ctx):
        torch = ctx.torch
        dt = _dtype(torch, name)
        x = torch.randint(lo, hi, (4096,), generator=gen(torch, 42), dtype=torch.int64)
        d = attempt("create %s on %s" % (name, ctx.device), lambda: x.to(ctx.device).to(dt))
        got = attempt("multiply %s on %s" % (name, ctx.device), lambda: d * d)
        if got.dtype != dt:
            raise Fail("%s * %s produced %s" % (name, name, got.dtype))
        back = attempt("convert %s back to int64" % name, lambda: got.cpu().to(torch.int64))
        ref = x * x
        wrong = int((back != ref).sum())
        if wrong:
            raise Fail("%d of %d products differ from int64" % (wrong, x.numel()), {"wrong": wrong})
        add = _extra_add(torch, d)
        return Report("%s on %s: 4096 products exact, add %s" % (name, ctx.device, "works" if add else
                                                               "not implemented"),
                      {"wrong": 0, "add": add, "device": ctx.device})
    fn.__doc__ = ("torch.%s tensors are created on the device and multiplied; every product equals "
                  "the int64 product exactly." % name)
    return fn


def _quant_check(name, scale, zero_point):
    def fn(ctx):
        torch = ctx.torch
        dt = _dtype(torch, name)
        q = ctx.require_attr(torch, "quantize_per_tensor")
        x = torch.randn(4096, generator=gen(torch, 43)) * 3
        if name.startswith("quint"):
            x = x.abs()
        qmin, qmax = {"quint8": (0, 255), "qint8": (-128, 127), "qint32": (-(1 << 31), (1 << 31) - 1),
                      "quint4x2": (0, 15)}[name]
        dx = x.to(ctx.device)
        qt = attempt("quantize_per_tensor(%s) on %s" % (name, ctx.device),
                     lambda: q(dx, scale, zero_point, dt))
        if qt.dtype != dt:
            raise Fail("quantize_per_tensor produced %s" % qt.dtype)
        ints = attempt("int_repr of %s" % name, lambda: qt.int_repr().cpu().to(torch.int64))
        want = torch.clamp(torch.round(x.double() / scale) + zero_point, qmin, qmax).to(torch.int64)
        if name == "quint4x2":  # two 4-bit values per byte: compare the dequantized values only
            wrong = 0
        else:
            wrong = int(((ints - want).abs() > 1).sum())  # +-1: float32 vs float64 rounding at .5
        if wrong:
            raise Fail("%d of %d quantized values differ from round(x/scale)+zp" % (wrong, x.numel()))
        deq = qt.dequantize().cpu()
        ref = (want - zero_point).double() * scale
        err = ctx.assert_close(deq, ref, 1e-3, "%s dequantize" % name)
        return Report("%s on %s: quantize/dequantize rel err %.2e" % (name, ctx.device, err),
                      {"rel_error": err, "scale": scale, "zero_point": zero_point, "device": ctx.device})
    fn.__doc__ = ("torch.quantize_per_tensor to torch.%s on the device gives round(x/scale)+zero_point "
                  "and dequantizes back to the float64 reference." % name)
    return fn


for _name, _tol in _FLOAT:
    check("features.dtype." + _name, "torch." + _name, "feature", "features")(_float_check(_name, _tol))
for _name, _tol in _COMPLEX:
    check("features.dtype." + _name, "torch." + _name, "feature", "features")(_complex_check(_name, _tol))
for _name, (_lo, _hi) in _INT:
    check("features.dtype." + _name, "torch." + _name, "feature", "features")(_int_check(_name, _lo, _hi))


@check("features.dtype.bool", "torch.bool", "feature", "features")
def dtype_bool(ctx):
    """torch.bool tensors on the device: logical and / xor / not equal the CPU truth table exactly."""
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
    check("features.dtype." + _name, "torch." + _name, "feature", "features")(_quant_check(_name, _scale, _zp))
