"""Scaled dot-product attention, one implementation at a time: each backend
(flash, mem_efficient, math, cudnn) is forced in turn and the operator that
torch.profiler records says which implementation actually ran. Flash is tried
in float16 and bfloat16 on a GPU, since float32 cannot use it there."""

from __future__ import annotations

import contextlib
import math
import warnings
from typing import Any, Callable, Dict, List, Optional, Tuple

from .. import evidence, observe
from ._common import _first_line, missing_feature, randn

BACKENDS = ("flash", "mem_efficient", "math", "cudnn")
_MEMBER = {
    "flash": "FLASH_ATTENTION",
    "mem_efficient": "EFFICIENT_ATTENTION",
    "math": "MATH",
    "cudnn": "CUDNN_ATTENTION",
}
TOLERANCE = {"float16": 1e-2, "bfloat16": 3e-2}


def dtypes_for(backend: str, device: str) -> Tuple[str, ...]:
    if device == "cpu":
        return ("float32",)
    return {
        "flash": ("float16", "bfloat16"),
        "cudnn": ("float16", "bfloat16"),
        "mem_efficient": ("float32", "float16"),
        "math": ("float32",),
    }[backend]


def forcing(ctx: Any, backend: str) -> Optional[Any]:
    """A context manager that lets only ``backend`` run (torch.nn.attention.sdpa_kernel,
    PyTorch 2.3+; torch.backends.cuda.sdp_kernel before), or None when this torch
    cannot force it."""
    torch = ctx.torch
    att = None
    with contextlib.suppress(Exception):
        att = ctx.load("torch.nn.attention")
    if att is not None and hasattr(att, "sdpa_kernel") and hasattr(att, "SDPBackend"):
        member = getattr(att.SDPBackend, _MEMBER[backend], None)
        return att.sdpa_kernel([member]) if member is not None else None
    old = getattr(getattr(torch.backends, "cuda", None), "sdp_kernel", None)
    if old is None or backend == "cudnn":
        return None
    return old(
        enable_flash=backend == "flash",
        enable_math=backend == "math",
        enable_mem_efficient=backend == "mem_efficient",
    )


def inputs(torch: Any, shape: Tuple[int, ...], seeds: Tuple[int, int, int]) -> List[Any]:
    return [randn(torch, *shape, seed=s) for s in seeds]


def reference(torch: Any, q: Any, k: Any, v: Any, causal: bool) -> Any:
    qd, kd, vd = q.double(), k.double(), v.double()
    scores = qd @ kd.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        n = q.shape[-2]
        mask = torch.ones(n, n, dtype=torch.bool).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ vd


def run_once(
    ctx: Any, sdpa: Callable, q: Any, k: Any, v: Any, causal: bool, dtype: str, guard: Optional[Any]
) -> Dict[str, Any]:
    """One SDPA call in ``dtype`` under ``guard``: what ran, its error, or why it could not."""
    torch = ctx.torch
    dt = getattr(torch, dtype)
    dq, dk, dv = (t.to(dt).to(ctx.device) for t in (q, k, v))
    ref = reference(torch, q.to(dt), k.to(dt), v.to(dt), causal)
    gpu = ctx.device == "cuda"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with guard if guard is not None else contextlib.nullcontext():
                got, ops, kernels = observe.profiled(
                    torch, lambda: sdpa(dq, dk, dv, is_causal=causal), gpu
                )
        except Exception as exc:
            why = "; ".join(str(w.message).strip().splitlines()[0] for w in caught[:3])
            text = "%s: %s" % (type(exc).__name__, _first_line(exc))
            return {
                "state": "unavailable" if missing_feature(exc) else "error",
                "dtype": dtype,
                "why": (text + (" (" + why + ")" if why else ""))[:400],
            }
    err = ctx.rel_error(got, ref)
    ran = evidence.sdpa_backends(ops)
    return {
        "state": "ran",
        "dtype": dtype,
        "rel_error": err,
        "tolerance": TOLERANCE.get(dtype, 5e-3 if gpu else 1e-4),
        "backends": ran,
        "kernels": kernels,
        "libraries": evidence.libraries_of(kernels, ctx.vendor) if kernels else [],
    }


def forced(
    ctx: Any, sdpa: Callable, backend: str, q: Any, k: Any, v: Any, causal: bool
) -> Dict[str, Any]:
    """Force ``backend`` and try its dtypes in turn; the first that runs is the answer."""
    last = {"state": "unavailable", "why": "this torch cannot force the %s backend" % backend}  # type: Dict[str, Any]
    for dtype in dtypes_for(backend, ctx.device):
        guard = forcing(ctx, backend)
        if guard is None:
            return last
        last = run_once(ctx, sdpa, q, k, v, causal, dtype, guard)
        if last["state"] == "ran":
            break
    return last


def describe(backend: str, r: Dict[str, Any]) -> str:
    if r["state"] != "ran":
        return "%s %s (%s)" % (backend, r["state"], r.get("why", ""))
    seen = ",".join(r["backends"]) or "unidentified"
    if backend in r["backends"]:
        return "%s ran (%s, rel err %.1e)" % (backend, r["dtype"], r["rel_error"])
    return "%s forced but %s ran (%s)" % (backend, seen, r["dtype"])
