"""Helpers shared by the workload suites (standard library only at import)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import tempfile
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

from .. import evidence
from ..context import Fail, Report, Unsupported

TIMING_BUDGET_S = 2.0  # per check: warm-up, then >= 10 samples, more within 0.2 s


def missing_feature(exc: BaseException) -> bool:
    """Does this exception say the op/dtype/backend is absent (rather than wrong,
    or installed but unable to run here)? See evidence.classify_error."""
    kind = evidence.classify_error("%s" % exc)
    if kind == "broken":
        return False
    return isinstance(exc, NotImplementedError) or kind == "missing"


def attempt(what: str, fn: Callable[[], Any]) -> Any:
    """Run ``fn``; an exception that says the feature is absent becomes Unsupported,
    one that says an installed component cannot run here becomes Fail with the
    evidence, anything else propagates (and so fails the check with its traceback)."""
    try:
        return fn()
    except Exception as exc:
        if evidence.classify_error("%s" % exc) == "broken":
            raise Fail(
                "%s: installed but cannot run here: %s: %s"
                % (what, type(exc).__name__, _first_line(exc)),
                {"error": _first_line(exc)[:300]},
            ) from exc
        if missing_feature(exc):
            raise Unsupported("%s: %s: %s" % (what, type(exc).__name__, _first_line(exc))) from exc
        raise


def has(obj: Any, name: str) -> bool:
    """hasattr that also survives objects whose __getattr__ raises something
    other than AttributeError (torch.backends.cuda.matmul asserts)."""
    try:
        getattr(obj, name)
        return True
    except Exception:
        return False


def _first_line(exc: BaseException) -> str:
    text = ("%s" % exc).strip()
    return text.splitlines()[0][:400] if text else ""


def gen(torch: Any, seed: int = 0) -> Any:
    return torch.Generator().manual_seed(seed)


def randn(torch: Any, *shape: int, seed: int = 0) -> Any:
    return torch.randn(*shape, generator=gen(torch, seed))


def fp_tolerance(ctx: Any, dtype_name: str, tf32_possible: bool = False) -> float:
    """Relative-error tolerance for a result computed in ``dtype_name`` from inputs
    already rounded to that dtype (so only the kernel's own rounding counts)."""
    if dtype_name == "float16":
        return 5e-3
    if dtype_name == "bfloat16":
        return 3e-2
    if dtype_name == "float64":
        return 1e-10
    # float32: a GPU may legitimately use TF32 (about 3 decimal digits)
    return 5e-3 if (tf32_possible and ctx.device != "cpu") else 1e-4


def timed(ctx: Any, fn: Callable[[], Any], message: str, metrics: Dict[str, Any]) -> Report:
    samples = ctx.timeit(fn, budget_s=TIMING_BUDGET_S)
    metrics = dict(metrics, device=ctx.device, reps=len(samples))
    return Report(message, metrics, samples=samples, unit="s")


def free_port() -> int:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
    finally:
        s.close()


def available(torch: Any, backend: Optional[str]) -> Any:
    """torch.distributed with this backend, or Unsupported naming what is missing."""
    dist = getattr(torch, "distributed", None)
    if dist is None or not dist.is_available():
        raise Unsupported("torch.distributed is not available in this build")
    probe = {"gloo": "is_gloo_available", "nccl": "is_nccl_available"}.get(backend or "")
    if probe and hasattr(dist, probe) and not getattr(dist, probe)():
        raise Unsupported(
            "torch.distributed.%s() is False: no %s backend in this build" % (probe, backend)
        )
    return dist


@contextlib.contextmanager
def process_group(torch: Any, backend: str) -> Iterator[Any]:
    """A world-size-1 process group over a FileStore (no network needed): for
    single-process uses of a backend (apex SyncBatchNorm), never for a row about
    communication (those run real ranks: see _dist)."""
    dist = available(torch, backend)
    if dist.is_initialized():
        dist.destroy_process_group()
    tmp = tempfile.mkdtemp(prefix="valorch-pg-")
    store = dist.FileStore(os.path.join(tmp, "store"), 1)
    attempt(
        "init_process_group(%s)" % backend,
        lambda: dist.init_process_group(backend, store=store, rank=0, world_size=1),
    )
    try:
        yield dist
    finally:
        try:
            if dist.is_initialized():
                dist.destroy_process_group()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


TOOL_DIRS = ("/opt/rocm/bin", "/opt/rocm-*/bin", "/usr/local/cuda/bin", "/opt/nvidia/nsight-*/bin")


def find_tool(name: str) -> Optional[str]:
    """PATH first, then the usual ROCm / CUDA install directories."""
    import glob

    exe = shutil.which(name)
    if exe:
        return exe
    for pattern in TOOL_DIRS:
        for d in sorted(glob.glob(pattern), reverse=True):
            exe = shutil.which(name, path=d)
            if exe:
                return exe
    return None


def tool_or_unsupported(name: str, find: Callable[[str], Optional[str]] = find_tool) -> str:
    """The tool's path (``find``: PATH and TOOL_DIRS), or Unsupported: the image lacks it."""
    exe = find(name)
    if exe is None:
        raise Unsupported(
            "%s is not on PATH (nor in %s) in this image" % (name, ", ".join(TOOL_DIRS))
        )
    return exe


_VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)*(?:[-.+~][0-9A-Za-z.]+)?)")


def run_tool(argv: Sequence[str], timeout: float = 60.0) -> Dict[str, Any]:
    """Run an external tool as an argv list (never a shell string), with a timeout.
    An absent executable is Unsupported."""
    exe = tool_or_unsupported(argv[0])
    try:
        proc = subprocess.run(
            [exe, *list(argv[1:])],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        raise Fail("%s passed its %ss timeout" % (" ".join(argv), timeout)) from exc
    out = proc.stdout.decode("utf-8", "replace")
    m = _VERSION.search(out)
    return {
        "path": exe,
        "argv": list(argv),
        "returncode": proc.returncode,
        "output": out[-2000:],
        "version": m.group(1) if m else None,
    }


def first_lines(text: str, n: int = 3) -> List[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip()][:n]
