"""What a check gets to work with: the framework (imported once per worker),
the device under test, the image's expectations, and helpers for numerics and
timing. Outcomes other than pass are raised as exceptions."""

from __future__ import annotations

import contextlib
import importlib
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

from . import evidence, observe


class Outcome(Exception):  # noqa: N818 (a check's outcome, raised to end it: not an error)
    status = "fail"

    def __init__(
        self,
        message: str = "",
        metrics: Optional[Dict[str, Any]] = None,
        log: str = "",
        extra: Optional[List[Dict[str, Any]]] = None,
    ):
        Exception.__init__(self, message)
        self.message = message
        self.metrics = metrics or {}
        self.log = log  # e.g. a command's output tails
        self.extra = extra or []  # further results (see Report.extra)


class Fail(Outcome):
    status = "fail"


class Partial(Outcome):
    """The feature exists but part of it failed or is not implemented; the
    message names what failed ("partial support: ...")."""

    status = "partial"


#: the metric of an ``unsupported`` whose module is not installed in the image: that holds
#: on any host, so it is never turned into ``n/a`` for a GPU row on a CPU image
NOT_INSTALLED = "not_installed"


class Unsupported(Outcome):
    """The feature does not exist in this framework version or backend."""

    status = "unsupported"


class NotApplicable(Outcome):
    """The row does not apply to this image (another vendor's tool, a GPU row on a CPU
    image): blank, and counted nowhere."""

    status = "n/a"


class Skip(Outcome):
    """Deliberately not run (no GPU here, not expected by the catalog entry)."""

    status = "skip"


@dataclass
class Report:
    """A passing check's evidence: a message, metrics and timing samples."""

    message: str = ""
    metrics: Dict[str, Any] = field(default_factory=dict)
    samples: List[float] = field(default_factory=list)
    unit: Optional[str] = None
    log: str = ""
    # Results of other check ids that this check produced (one per upstream
    # pytest test): dicts with check, status, feature, kind, message, log,
    # duration_s; the worker writes each as one more RESULT line.
    extra: List[Dict[str, Any]] = field(default_factory=list)


class Context:
    def __init__(self, expect: Optional[Dict[str, str]] = None, device: str = "auto"):
        self.expect = dict(expect or {})
        self.device_mode = device
        self._modules = {}  # type: Dict[str, Any]
        self._import_errors = {}  # type: Dict[str, Outcome]
        self._device = None  # type: Optional[str]
        self._label = None  # type: Optional[str]
        self._arch = None  # type: Optional[Dict[str, Any]]
        self._config = None  # type: Optional[str]
        self.seen = None  # type: Optional[observe.Seen]
        self._claimed_device = None  # type: Optional[str]
        self._no_gpu_why = None  # type: Optional[str]

    def load(self, name: str) -> Any:
        """Import a module once. Genuinely absent (ModuleNotFoundError for this
        name or a parent package) is unsupported; installed but failing to import
        (an undefined symbol, a missing dependency, an error raised inside) fails,
        with the evidence."""
        if name in self._modules:
            return self._modules[name]
        if name in self._import_errors:
            known = self._import_errors[name]
            raise type(known)(known.message, dict(known.metrics), known.log)
        try:
            module = importlib.import_module(name)
        except Exception as exc:  # ImportError, OSError from a shared library, anything
            self._import_errors[name] = import_outcome(name, exc)
            raise self._import_errors[name] from exc
        self._modules[name] = module
        return module

    def has(self, name: str) -> bool:
        """Is the module importable? (absent and broken both answer False)."""
        try:
            self.load(name)
            return True
        except Outcome:
            return False

    @property
    def torch(self) -> Any:
        return self.load("torch")

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
            raise Skip(
                "needs a GPU; none is visible to this container (device: cpu)" + self.no_gpu_why()
            )

    def no_gpu_why(self) -> str:
        """What a "needs a GPU" skip adds where nvidia-smi lists GPUs that a CUDA build of torch does
        not see (the host's driver too old for the image's CUDA: probe/nvidia_driver.py); "" otherwise."""
        if self._no_gpu_why is None:
            self._no_gpu_why = ""
            if self.device_mode != "cpu" and self.vendor == "nvidia":
                from . import nvidia_driver

                self._no_gpu_why = nvidia_driver.no_gpu_note(
                    self.torch.version.cuda, nvidia_driver.driver_facts()
                )
        return self._no_gpu_why

    @property
    def vendor(self) -> Optional[str]:
        """'amd' for a HIP build of torch, 'nvidia' for a CUDA build, else None."""
        torch = self._modules.get("torch")
        if torch is None:
            return None
        if getattr(torch.version, "hip", None):
            return "amd"
        if getattr(torch.version, "cuda", None):
            return "nvidia"
        return None

    def device_label(self) -> str:
        """The device checks run on: 'cpu', 'cuda:0 NVIDIA H100 80GB HBM3 sm_90',
        'cuda:0 AMD Instinct MI300X gfx942'."""
        if self._label is None:
            self._label = "cpu"
            if "torch" in self._modules and self.device == "cuda":
                torch = self.torch
                idx = torch.cuda.current_device()
                self._label = evidence.device_label(
                    idx, torch.cuda.get_device_name(idx), self.gpu_arch(idx)
                )
        return self._label

    def gpu_arch(self, index: int = 0) -> str:
        """The device's arch as the build's arch list names it: 'gfx942' (HIP) or 'sm_90' (CUDA);
        '' when a HIP build does not tell (torch without ``gcnArchName``).

        ``gcnArchName`` is read only on a HIP build: on a CUDA build PyTorch binds that
        property to the device *name* (pytorch/pytorch torch/csrc/cuda/Module.cpp,
        registerCudaDeviceProperties: "HIP-only property; reuse name attribute for CUDA
        builds"), and on ROCm major/minor are the gfx version's digits (9, 4 on an MI300X),
        never an sm_XY."""
        torch = self.torch
        props = torch.cuda.get_device_properties(index)
        if getattr(torch.version, "hip", None):
            return evidence.base_arch(getattr(props, "gcnArchName", None) or "")
        return "sm_%d%d" % (props.major, props.minor)

    def arch_facts(self) -> Dict[str, Any]:
        """The arch list the framework was built for (torch.cuda.get_arch_list(),
        ROCm too) against the visible GPUs' archs; empty for a CPU build."""
        if self._arch is None:
            self._arch = {}
            torch = self._modules.get("torch")
            if torch is not None and self.vendor is not None:
                archs = []  # type: List[str]
                with contextlib.suppress(Exception):
                    archs = list(torch.cuda.get_arch_list())
                    if not archs and hasattr(torch._C, "_cuda_getArchFlags"):
                        archs = (torch._C._cuda_getArchFlags() or "").split()
                self._arch["arch_list"] = ",".join(archs)
                if self.device == "cuda":
                    gpus = sorted(
                        {self.gpu_arch(i) or "unknown" for i in range(torch.cuda.device_count())}
                    )
                    # an arch the build does not report cannot be judged: "unknown", never "missing"
                    cover = {
                        g: evidence.arch_coverage(archs, g) if g != "unknown" else "unknown"
                        for g in gpus
                    }
                    self._arch["gpu_archs"] = ",".join(gpus)
                    self._arch["arch_coverage"] = ",".join(
                        "%s:%s" % kv for kv in sorted(cover.items())
                    )
                    self._arch["arch_missing"] = ",".join(
                        g for g, c in sorted(cover.items()) if c == "missing"
                    )
        return self._arch

    def config(self) -> str:
        """torch.__config__.show(): the libraries this build links."""
        if self._config is None:
            self._config = ""
            torch = self._modules.get("torch")
            with contextlib.suppress(Exception):
                self._config = str(torch.__config__.show()) if torch is not None else ""
        return self._config

    def observe(
        self, fn: Callable[[], Any], cpu_family: Optional[str] = None, verbose: bool = True
    ) -> Any:
        """Run ``fn`` once while collecting evidence of the library that ran it
        (GPU kernel names, or the CPU library's verbose lines; ``cpu_family``
        "blas" / "lapack" names the build's BLAS / LAPACK when nothing printed).
        The evidence becomes the result's ``library``."""
        if self.device == "cuda":
            value, seen = observe.on_gpu(self.torch, fn, self.vendor)
        else:
            value, seen = observe.on_cpu(self.torch, fn, cpu_family, self.config(), verbose)
        if self.seen is None:
            self.seen = seen
        else:
            self.seen.merge(seen)
        return value

    def claim(
        self, library: Optional[str] = None, device: Optional[str] = None, source: str = ""
    ) -> None:
        """Evidence a check gathered itself (a TensorFlow placement, a collective's
        backend, a tool's output): merged into the result like observe()'s."""
        seen = observe.Seen(libraries=[library] if library else [], source=source)
        if self.seen is None:
            self.seen = seen
        else:
            self.seen.merge(seen)
        if device:
            self._claimed_device = device

    def resolve(self, ambiguous: str, library: str, source: str) -> None:
        """Evidence that names which library an ambiguous kernel label stands for (Tensile's
        "rocBLAS/hipBLASLt" resolved by a library's own log): replaces that label."""
        if self.seen is None or ambiguous not in self.seen.libraries:
            self.claim(library=library, source=source)
            return
        self.seen.libraries = [library if lib == ambiguous else lib for lib in self.seen.libraries]
        self.seen.source = ("%s; %s" % (self.seen.source, source)).strip("; ")

    def decide(self, libraries: List[str], covers: List[str], source: str) -> None:
        """A library's own log named the libraries that ran (vendor_log.py): they replace
        the kernel-name labels in ``covers`` (the names those libraries share or dispatch
        to), come first, and the evidence says which log decided and what the names said."""
        if not libraries:
            return
        if self.seen is None:
            self.seen = observe.Seen()
        guessed = [lib for lib in self.seen.libraries if lib in covers]
        kept = [lib for lib in self.seen.libraries if lib not in covers + libraries]
        self.seen.libraries = list(libraries) + kept
        note = "decided by the library's own log: %s" % source
        if guessed:
            note += " (kernel names alone said %s)" % " + ".join(guessed)
        self.seen.source = ("%s; %s" % (note, self.seen.source)).strip("; ")

    def begin(self) -> None:
        """Forget the previous check's evidence."""
        self.seen = None
        self._claimed_device = None

    def finish(self, result: Dict[str, Any]) -> None:
        """Stamp a result with the device it ran on, the library evidence showed
        (never the check's declared label) and, for a GPU build, the arch facts."""
        device = getattr(self, "_claimed_device", None)
        if device is None:
            device = "cpu"
            if "torch" in self._modules:
                try:
                    device = self.device_label()
                except Exception as exc:  # a broken GPU runtime: say so, keep the check's verdict
                    device = "unknown (%s: %s)" % (type(exc).__name__, str(exc)[:120])
        result["device"] = device
        summary = observe.summary(self.seen, device)
        result["library"] = summary.get("library")
        metrics = dict(result.get("metrics") or {})
        for key, value in summary.get("metrics", {}).items():
            metrics.setdefault(key, value)
        # mirrored in the metrics, which every store keeps (a result's own device / library
        # fields need the store's columns)
        metrics["device"] = device
        if result["library"] is not None:
            metrics["library"] = result["library"]
        if result.get("status") != "skip" and "torch" in self._modules:
            try:
                facts = self.arch_facts()
            except Exception as exc:
                facts = {"arch_error": "%s: %s" % (type(exc).__name__, str(exc)[:200])}
            for key, value in facts.items():
                metrics.setdefault(key, value)
            missing = facts.get("arch_missing")
            if missing and result.get("status") in ("fail", "crash", "partial"):
                result["message"] = (
                    "%s [torch was built for %s; no code for this GPU's %s]"
                    % (result.get("message", ""), facts.get("arch_list") or "no GPU arch", missing)
                ).strip()
        result["metrics"] = metrics

    def require_attr(self, obj: Any, dotted: str) -> Any:
        """Walk an attribute path; a missing attribute means unsupported."""
        cur = obj
        for part in dotted.split("."):
            try:
                cur = getattr(cur, part)
            except Exception as exc:  # not only AttributeError: torch.backends.cuda.matmul asserts
                raise Unsupported(
                    "%s has no attribute %s" % (getattr(obj, "__name__", obj), dotted)
                ) from exc
        return cur

    def synchronize(self) -> None:
        if self._device == "cuda":
            self.torch.cuda.synchronize()

    def timeit(
        self, fn: Callable[[], Any], warmup: int = 2, reps: int = 10, budget_s: float = 5.0
    ) -> List[float]:
        """Wall-clock samples of ``fn`` (device synchronised): warm-up, then at
        least ``reps`` samples, more while within ``budget_s``."""
        for _ in range(warmup):
            fn()
        self.synchronize()
        samples = []  # type: List[float]
        start_all = time.perf_counter()
        while len(samples) < reps or (
            time.perf_counter() - start_all < budget_s * 0.1 and len(samples) < 100
        ):
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
            raise Fail(
                "%s: relative error %.3e exceeds tolerance %.1e" % (what, err, tol),
                {"rel_error": err, "tolerance": tol},
            )
        return err


def import_outcome(name: str, exc: BaseException) -> Outcome:
    """Why ``import name`` failed, as an outcome: unsupported only when the module
    (or a parent package of it) is genuinely absent; anything else (a shared
    library with an undefined symbol, a dependency missing, an exception inside
    the package) is an installed-but-broken failure."""
    text = "%s: %s" % (type(exc).__name__, str(exc)[:400])
    missing = getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None
    if missing and (name == missing or name.startswith(missing + ".")):
        return Unsupported(
            "%s is not importable in this image: not installed (%s)" % (name, text),
            {NOT_INSTALLED: name},
        )
    import traceback

    return Fail(
        "%s is installed but fails to import: %s" % (name, text),
        {"import_error": text[:300]},
        log="".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:],
    )
