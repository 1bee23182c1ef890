"""Watching an operation run, to name the library that evidence says ran it.

On a GPU: ``torch.profiler`` records the device kernels, and evidence.KERNEL_LIBRARIES
names their libraries. On the CPU: MKL's and oneDNN's verbose modes print one line
per call, captured from file descriptor 1; without such a line the BLAS / LAPACK
the build links (``torch.__config__.show()``) is named for BLAS / LAPACK work, and
otherwise just "cpu". ``on_cpu`` (the smoke suite's) never switches MKL's verbose mode on:
in a process whose MKL is initialised that costs 0.4–0.9 s (docs/benchmarks.md, "Why the
code is shaped for speed"). The framework module is passed in: this file imports only
the standard library.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import evidence, read_text


@dataclass
class Seen:
    """What one observed call showed."""

    libraries: List[str] = field(default_factory=list)
    kernels: List[str] = field(default_factory=list)
    ops: List[str] = field(default_factory=list)
    calls: List[str] = field(default_factory=list)
    source: str = ""

    def merge(self, other: Seen) -> None:
        for name in ("libraries", "kernels", "ops", "calls"):
            mine = getattr(self, name)
            for item in getattr(other, name):
                if item not in mine:
                    mine.append(item)
        if other.source and other.source not in self.source:
            self.source = (self.source + "; " + other.source).strip("; ")


def profiled(torch: Any, fn: Callable[[], Any], gpu: bool) -> Tuple[Any, List[str], List[str]]:
    """Run ``fn`` under torch.profiler: (value, operator names, device kernel names).
    Raises AttributeError when this torch has no usable profiler."""
    prof = torch.profiler
    acts = [prof.ProfilerActivity.CPU] + ([prof.ProfilerActivity.CUDA] if gpu else [])
    with prof.profile(activities=acts) as p:
        value = fn()
        if gpu:
            torch.cuda.synchronize()
    events = [(str(getattr(e, "device_type", "")).upper(), str(e.name)) for e in p.events()]
    on_device = [("CUDA" in kind or "HIP" in kind, name) for kind, name in events]
    ops = list(dict.fromkeys(name for device, name in on_device if not device))
    return value, ops, list(dict.fromkeys(name for device, name in on_device if device))


def on_gpu(torch: Any, fn: Callable[[], Any], vendor: Optional[str]) -> Tuple[Any, Seen]:
    seen = Seen()
    try:
        value, seen.ops, seen.kernels = profiled(torch, fn, gpu=True)
    except (AttributeError, ImportError) as exc:  # no torch.profiler in this version
        seen.source = "no torch.profiler (%s): library not proven" % exc
        return fn(), seen
    seen.libraries = evidence.libraries_of(seen.kernels, vendor, sys.modules)
    seen.source = "torch.profiler kernel names (%d kernels)" % len(seen.kernels)
    return value, seen


@contextlib.contextmanager
def _fd1_to(path: str):
    """Point file descriptor 1 at ``path`` while inside (C libraries print there)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)  # type: Any
    except Exception:
        libc = None

    def flush() -> None:
        sys.stdout.flush()
        if libc is not None:
            libc.fflush(None)

    flush()
    saved = os.dup(1)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.dup2(fd, 1)
        yield
    finally:
        flush()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(fd)


def _verbose_contexts(torch: Any) -> List[Any]:
    ctxs = []
    backends = getattr(torch, "backends", None)
    for name in ("mkl", "mkldnn"):
        lib: Any = getattr(backends, name, None)
        if hasattr(lib, "verbose") and getattr(lib, "is_available", lambda: False)():
            ctxs.append(lib.verbose(getattr(lib, "VERBOSE_ON", 1)))
    return ctxs


def on_cpu(
    torch: Any, fn: Callable[[], Any], family: Optional[str], config: str, verbose: bool = True
) -> Tuple[Any, Seen]:
    """``verbose=False``: no MKL/oneDNN verbose mode. Switching MKL's verbose mode on in a
    process whose MKL is already initialised is slow (once per process) and would be most of
    the smoke suite's time; the library then comes from what is mapped into the process or from
    the build's settings, which the source says."""
    seen = Seen()
    ctxs = _verbose_contexts(torch) if verbose else []
    why = "no verbose line" if verbose else "verbose mode not used by this check"
    text = ""
    if ctxs:
        fd, path = tempfile.mkstemp(prefix="valorch-verbose-")
        os.close(fd)
        try:
            with _fd1_to(path), contextlib.ExitStack() as stack:
                for c in ctxs:
                    stack.enter_context(c)
                value = fn()
            with open(path, errors="replace") as fh:
                text = fh.read(1 << 20)
        finally:
            os.unlink(path)
    else:
        value = fn()
    seen.libraries, seen.calls = evidence.cpu_libraries_from_verbose(text)
    if seen.libraries:
        seen.source = "verbose mode: %s" % ", ".join(seen.calls[:6])
    elif family in ("blas", "lapack"):
        mapped = evidence.cpu_library_from_maps(process_maps(), family)
        lib = evidence.cpu_library_from_config(config, family)
        setting = evidence.build_setting(config, family.upper() + "_INFO")
        # the build names the library torch links (a wheel's MKL / OpenBLAS): that one ran;
        # a "generic" build (Debian's): the libblas / liblapack the loader chose, if mapped
        if lib is not None and (setting != "generic" or not mapped):
            seen.libraries = [lib]
            said = "%s_INFO=%s" % (family.upper(), setting)
            seen.source = "torch.__config__.show(): %s (%s)" % (said, why)
        elif mapped:
            seen.libraries = [mapped[0]]
            seen.source = "mapped into the process: %s (%s)" % (mapped[1], why)
    if not seen.libraries:
        seen.source = seen.source or "no library call seen (torch's own CPU kernels)"
    return value, seen


def process_maps() -> str:
    return read_text("/proc/self/maps")


def summary(seen: Optional[Seen], device: str) -> Dict[str, Any]:
    if seen is None:
        return {}
    lib = evidence.label(seen.libraries)
    if lib is None and device == "cpu":
        lib = "cpu"
    metrics = {"library_evidence": seen.source[:500]}
    if seen.kernels:
        metrics["kernels"] = ";".join(seen.kernels[:12])[:1500]
    return {"library": lib, "metrics": metrics}
