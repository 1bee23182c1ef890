"""What a check gets to work with: the framework (imported once per worker),
the device under test, the image's expectations, and helpers for numerics and
timing. Outcomes other than pass are raised as exceptions."""

from __future__ import annotations

import importlib
import math
import time
from typing import Any, Callable, Dict, List, Optional


class Outcome(Exception):
    status = "fail"

    def __init__(self, message: str = "", metrics: Optional[Dict[str, Any]] = None, log: str = "",
                 extra: Optional[List[Dict[str, Any]]] = None):
        Exception.__init__(self, message)
        self.message = message
        self.metrics = metrics or {}
        self.log = log  # e.g. a command's output tails
        self.extra = extra or []  # further results (see Report.extra)


class Fail(Outcome):
    status = "fail"


class Unsupported(Outcome):
    """The feature does not exist in this framework version or backend."""
    status = "unsupported"


class Skip(Outcome):
    """Deliberately not run (no GPU here, not expected by the catalog entry)."""
    status = "skip"


class Report(object):
    """A passing check's evidence: a message, metrics and timing samples."""

    def __init__(self, message: str = "", metrics: Optional[Dict[str, Any]] = None,
                 samples: Optional[List[float]] = None, unit: Optional[str] = None, log: str = "",
                 extra: Optional[List[Dict[str, Any]]] = None):
        self.message = message
        self.metrics = metrics or {}
        self.samples = samples or []
        self.unit = unit
        self.log = log
        # Results of other check ids that this check produced (one per upstream
        # pytest test): dicts with check, status, feature, kind, message, log,
        # duration_s; the worker writes each as one more RESULT line.
        self.extra = extra or []


class Context(object):
    def __init__(self, expect: Optional[Dict[str, str]] = None, device: str = "auto"):
        self.expect = dict(expect or {})
        self.device_mode = device
        self._modules = {}  # type: Dict[str, Any]
        self._import_errors = {}  # type: Dict[str, str]
        self._device = None  # type: Optional[str]

    # -- frameworks ---------------------------------------------------------
    def load(self, name: str) -> Any:
        """Import a module once; a missing one makes the check unsupported."""
        if name in self._modules:
            return self._modules[name]
        if name in self._import_errors:
            raise Unsupported(self._import_errors[name])
        try:
            module = importlib.import_module(name)
        except Exception as exc:  # ImportError, or a broken install raising anything
            self._import_errors[name] = "%s is not importable in this image: %s: %s" % (
                name, type(exc).__name__, str(exc)[:300])
            raise Unsupported(self._import_errors[name])
        self._modules[name] = module
        return module

    def has(self, name: str) -> bool:
        try:
            self.load(name)
            return True
        except Unsupported:
            return False

    @property
    def torch(self) -> Any:
        return self.load("torch")

    # -- device -------------------------------------------------------------
    @property
    def gpu_available(self) -> bool:
        if self.device_mode == "cpu":
            return False
        torch = self.torch
        return bool(torch.cuda.is_available())

    @property
    def device(self) -> str:
        """'cuda' (also ROCm's HIP devices) when a GPU is visible, else 'cpu'."""
        if self._device is None:
            self._device = "cuda" if self.gpu_available else "cpu"
        return self._device

    def require_gpu(self) -> None:
        if not self.gpu_available:
            raise Skip("needs a GPU; none is visible to this container")

    def require_attr(self, obj: Any, dotted: str) -> Any:
        """Walk an attribute path; a missing attribute means unsupported."""
        cur = obj
        for part in dotted.split("."):
            try:
                cur = getattr(cur, part)
            except Exception:  # not only AttributeError: torch.backends.cuda.matmul asserts
                raise Unsupported("%s has no attribute %s" % (getattr(obj, "__name__", obj), dotted))
        return cur

    def synchronize(self) -> None:
        if self._device == "cuda":
            self.torch.cuda.synchronize()

    # -- numerics and timing --------------------------------------------------
    def timeit(self, fn: Callable[[], Any], warmup: int = 2, reps: int = 10,
               budget_s: float = 5.0) -> List[float]:
        """Wall-clock samples of ``fn`` (device synchronised): warm-up, then at
        least ``reps`` samples, more while within ``budget_s``."""
        for _ in range(warmup):
            fn()
        self.synchronize()
        samples = []  # type: List[float]
        start_all = time.perf_counter()
        while len(samples) < reps or (time.perf_counter() - start_all < budget_s * 0.1 and len(samples) < 100):
            t0 = time.perf_counter()
            fn()
            self.synchronize()
            samples.append(time.perf_counter() - t0)
            if time.perf_counter() - start_all > budget_s and len(samples) >= reps:
                break
        return samples

    @staticmethod
    def rel_error(got: Any, ref: Any) -> float:
        """Relative error in the Frobenius norm, computed in float64 on the CPU.
        The reference must not be all zeros (a check that compares zeros proves nothing)."""
        got64 = got.detach().to("cpu").double()
        ref64 = ref.detach().to("cpu").double()
        denom = float(ref64.norm())
        if denom == 0.0 or math.isnan(denom):
            raise Fail("reference is all zeros or NaN: the comparison would prove nothing")
        return float((got64 - ref64).norm()) / denom

    def assert_close(self, got: Any, ref: Any, tol: float, what: str) -> float:
        err = self.rel_error(got, ref)
        if not err <= tol:  # also catches NaN
            raise Fail("%s: relative error %.3e exceeds tolerance %.1e" % (what, err, tol),
                       {"rel_error": err, "tolerance": tol})
        return err
