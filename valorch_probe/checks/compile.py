"""compile: torch.compile with the inductor and aot_eager backends on a small
MLP and a small conv net (compiled vs eager numerics, compile time as the
metric ``compile_s``), and torch.export."""

from __future__ import annotations

import atexit
import copy
import functools
import os
import shutil
import tempfile
import time

from ..context import Fail, Outcome, Report, Unsupported
from ..registry import check, suite
from ._common import TIMING_BUDGET_S, _first_line, missing_feature, randn

suite(
    "compile",
    "torch",
    "torch.compile (inductor, aot_eager) and torch.export: compiled vs eager numerics, compile time.",
)

_COMPILERS = ("cc", "gcc", "g++", "c++", "clang", "clang++")


def _mlp(torch):
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.LayerNorm(128), torch.nn.Linear(128, 10)
    )


def _convnet(torch):
    torch.manual_seed(0)
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(16, 10),
    )


_MODELS = {"mlp": (_mlp, (32, 64)), "convnet": (_convnet, (4, 3, 32, 32))}


_CACHE = []  # type: list


def _cold_cache():
    """One fresh inductor cache per worker: compile_s is what a first compile costs
    in this image (not a warm cache from an earlier run), shared by the checks."""
    if not _CACHE:
        path = tempfile.mkdtemp(prefix="valorch-inductor-")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = path
        _CACHE.append(path)
        atexit.register(shutil.rmtree, path, True)


def _compiled(ctx, backend, model_name):
    torch = ctx.torch
    compile_fn = ctx.require_attr(torch, "compile")
    make, shape = _MODELS[model_name]
    model = make(torch).eval()
    ref_model = copy.deepcopy(model).double()
    x = randn(torch, *shape, seed=90)
    dev_model = model.to(ctx.device)
    dx = x.to(ctx.device).requires_grad_(True)
    eager = dev_model(dx)
    eager.square().sum().backward()
    eager_grad = dx.grad.detach().clone()
    dx.grad = None
    ref = ref_model(x.double())

    _cold_cache()
    if hasattr(torch, "_dynamo"):
        torch._dynamo.reset()
    cm = compile_fn(dev_model, backend=backend)
    t0 = time.perf_counter()
    try:
        got = cm(dx)
        got.square().sum().backward()
        ctx.synchronize()
    except Exception as exc:
        raise _classify(exc, backend) from exc
    compile_s = time.perf_counter() - t0
    got_grad = dx.grad.detach().clone()
    tol = 5e-3 if ctx.device != "cpu" else 1e-4
    err_eager = ctx.assert_close(got, eager, tol, "%s %s vs eager" % (backend, model_name))
    err_ref = ctx.assert_close(got, ref, tol, "%s %s vs float64" % (backend, model_name))
    err_grad = ctx.assert_close(
        got_grad, eager_grad, tol, "%s %s input gradient vs eager" % (backend, model_name)
    )
    samples = ctx.timeit(lambda: cm(dx), budget_s=TIMING_BUDGET_S)  # same guards: no recompile
    metrics = {
        "compile_s": compile_s,
        "rel_error_vs_eager": err_eager,
        "rel_error_vs_float64": err_ref,
        "rel_error_grad": err_grad,
        "tolerance": tol,
        "device": ctx.device,
        "backend": backend,
    }
    return Report(
        "%s %s on %s: compiled in %.1f s, vs eager %.1e, vs float64 %.1e, grad %.1e"
        % (backend, model_name, ctx.device, compile_s, err_eager, err_ref, err_grad),
        metrics,
        samples=samples,
        unit="s",
    )


def _classify(exc, backend):
    text = "%s: %s" % (type(exc).__name__, _first_line(exc))
    if backend == "inductor" and not any(shutil.which(c) for c in _COMPILERS):
        # torch ships inductor, but its CPU code generator needs a C++ compiler the image lacks:
        # a user of this image cannot use torch.compile's default backend, so this is a failure.
        return Fail(
            "inductor needs a C/C++ compiler and the image has none on PATH (%s); %s"
            % (", ".join(_COMPILERS), text)
        )
    if missing_feature(exc) and "backend" in str(exc).lower() and "invalid" in str(exc).lower():
        return Unsupported("torch.compile backend %s is not available: %s" % (backend, text))
    return exc


for _backend, _feature in (
    ("inductor", "torch.compiler (TorchInductor)"),
    ("aot_eager", "torch.compiler (AOT Autograd)"),
):
    for _model in ("mlp", "convnet"):
        _fn = functools.partial(_compiled, backend=_backend, model_name=_model)
        _fn.__doc__ = (
            "torch.compile(backend=%r) of a small %s on the device: forward and input gradient "
            "equal eager mode and the float64 reference; compile time is stored as compile_s.\n\n"
            "Not proven: dynamic shapes, graph breaks, other models, or that the compiled code is "
            "faster." % (_backend, _model)
        )
        check("compile.%s.%s" % (_backend, _model), _feature, "compile", "compile", unit="s")(_fn)


@check("compile.dynamo.eager", "torch.compiler (TorchDynamo)", "compile", "compile")
def dynamo_eager(ctx):
    """TorchDynamo captures a small function with a data-dependent branch: torch.compile(backend="eager") reproduces
    eager results for inputs taking both branches, and a counting backend (a callable, public API) receives the
    captured FX graphs (at least one graph, the branch guarded or split).

    Not proven: inductor or any code generation (compile.inductor.* cover it), nor capture of large models."""
    torch = ctx.torch
    compile_fn = ctx.require_attr(torch, "compile")
    if hasattr(torch, "_dynamo"):
        torch._dynamo.reset()

    def f(x, w):
        y = torch.nn.functional.gelu(x @ w)
        if float(y.sum()) > 0:  # data-dependent control flow: a guard or a graph break
            return y * 2.0
        return y - 1.0

    w = randn(torch, 32, 16, seed=92).to(ctx.device)
    xs = [randn(torch, 8, 32, seed=s).to(ctx.device) for s in (93, 94)]
    xs.append(-xs[0])
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(len(list(gm.graph.nodes)))
        return gm.forward

    eager_c = compile_fn(f, backend="eager")
    counted = compile_fn(f, backend=counting)
    errs = []
    try:
        for x in xs:
            want = f(x, w)
            errs.append(
                ctx.assert_close(eager_c(x, w), want.double(), 1e-6, "dynamo eager vs eager")
            )
            ctx.assert_close(counted(x, w), want.double(), 1e-6, "dynamo counting backend vs eager")
    except Outcome:
        raise
    except Exception as exc:
        raise _classify(exc, "eager") from exc
    if not graphs:
        raise Fail(
            "torch.compile ran, but the backend never received a captured graph (Dynamo captured nothing)"
        )
    return Report(
        "Dynamo captured %d graph(s) (%s FX nodes) over %d inputs; backend=eager matches eager (%.1e)"
        % (len(graphs), "/".join(str(n) for n in graphs), len(xs), max(errs)),
        {
            "graphs": len(graphs),
            "graph_nodes": sum(graphs),
            "rel_error": max(errs),
            "device": ctx.device,
        },
    )


@check("compile.export", "torch.export", "compile", "compile")
def export(ctx):
    """torch.export.export captures the small conv net as an ExportedProgram whose module reproduces eager output.

    Not proven: dynamic shapes, serialisation (torch.export.save/load) or AOTInductor packaging."""
    torch = ctx.torch
    exp = ctx.require_attr(torch, "export.export")
    model = _convnet(torch).eval().to(ctx.device)
    x = randn(torch, 4, 3, 32, 32, seed=91).to(ctx.device)
    t0 = time.perf_counter()
    ep = exp(model, (x,))
    export_s = time.perf_counter() - t0
    with torch.no_grad():
        got = ep.module()(x)
        eager = model(x)
    err = ctx.assert_close(got, eager, 1e-5, "exported vs eager")
    n_nodes = len(list(ep.graph.nodes))
    if n_nodes < 5:
        raise Fail("exported graph has only %d nodes" % n_nodes)
    return Report(
        "exported %d graph nodes in %.2f s, rel err vs eager %.1e" % (n_nodes, export_s, err),
        {"export_s": export_s, "graph_nodes": n_nodes, "rel_error": err},
    )
