"""smoke: environment facts, the framework build, a tensor op and a matmul on
the device, and the versions found against the image's catalog entry."""

from __future__ import annotations

import contextlib
import platform
import sys
from typing import Any, Dict

from .. import read_text
from ..context import Fail, Report, Skip, Unsupported
from ..registry import check, suite
from ._versions import matches, os_release, prefix_warning, rocm_release

suite(
    "smoke",
    "torch",
    "Is this image alive? Facts, versions against the catalog, one op and one matmul on the device.",
)


@check("env.facts", "Environment facts", "environment", "smoke")
def env_facts(ctx):
    """Python, OS, framework build and visible devices (recorded as metrics).

    Not proven: anything: it records facts (the device found, the build's arch list) and fails only when it
    cannot read them."""
    osr = os_release()
    facts: Dict[str, Any] = {
        "python": platform.python_version(),
        "os_id": osr.get("ID"),
        "os_version": osr.get("VERSION_ID"),
        "machine": platform.machine(),
    }
    if ctx.has("torch"):
        torch = ctx.torch
        facts.update(
            torch=torch.__version__,
            torch_hip=getattr(torch.version, "hip", None),
            torch_cuda=getattr(torch.version, "cuda", None),
            gpu_available=ctx.gpu_available,
            device=ctx.device_label(),
            device_count=torch.cuda.device_count() if ctx.gpu_available else 0,
        )
        if ctx.gpu_available:
            facts["device_name"] = torch.cuda.get_device_name(0)
            facts["device_arch"] = ctx.gpu_arch(0)
        facts.update(ctx.arch_facts())
    else:
        facts["torch"] = None
    return Report(
        "%s on %s %s, device: %s"
        % (
            facts.get("torch") or "no torch",
            facts["os_id"],
            facts["os_version"],
            facts.get("device", "cpu"),
        ),
        metrics=facts,
    )


def _compare(key, want, found, source):
    """``found`` against the catalog's pin ``want``: a version nobody pinned is still measured."""
    if not want:
        if found is None:
            raise Skip("%s: not found (%s) and the catalog entry does not pin it" % (key, source))
        return Report(
            "%s %s (%s; the catalog entry pins no version)" % (key, found, source),
            {"expected": None, "found": found},
        )
    if found is None:
        raise Fail(
            "%s: expected %s, not found (%s)" % (key, want, source),
            {"expected": want, "found": None},
        )
    if not matches(want, found):
        raise Fail(
            "%s: expected %s, found %s (%s)" % (key, want, found, source),
            {"expected": want, "found": found},
        )
    said = "%s %s matches %s (%s)" % (key, found, want, source)
    metrics = {"expected": want, "found": found}
    warning = prefix_warning(want, found)
    if warning:
        metrics["warning"] = warning
        said += "; " + warning
    return Report(said, metrics)


@check("env.version.python", "Python version", "environment", "smoke")
def version_python(ctx):
    """The interpreter's version matches the catalog entry (prefix match).

    Not proven: that the interpreter's standard library or pip work."""
    return _compare("python", ctx.expect.get("python"), platform.python_version(), sys.executable)


@check("env.version.os", "OS release", "environment", "smoke")
def version_os(ctx):
    """/etc/os-release names the distribution and release of the catalog entry.

    Not proven: the installed packages of that release."""
    osr = os_release()
    version, source = os_version(osr)
    for distro in ("ubuntu", "debian", "rhel", "rocky", "almalinux", "sles"):
        if ctx.expect.get(distro):
            if osr.get("ID") != distro:
                raise Fail(
                    "os: expected %s %s, found %s %s"
                    % (distro, ctx.expect[distro], osr.get("ID"), version)
                )
            return _compare(distro, ctx.expect[distro], version, source)
    return _compare(osr.get("ID") or "os", None, version, source)


def os_version(osr, debian_version="/etc/debian_version"):
    """The release os-release names (VERSION_ID) and where it was read; Debian's testing and
    unstable have none and name themselves in /etc/debian_version ("forky/sid")."""
    if osr.get("VERSION_ID") or osr.get("ID") != "debian":
        return osr.get("VERSION_ID"), "/etc/os-release"
    return read_text(debian_version, 200).strip() or None, debian_version


@check("env.version.pytorch", "PyTorch version", "environment", "smoke")
def version_pytorch(ctx):
    """torch.__version__ matches the catalog's PyTorch version.

    Not proven: that torch works (the other checks measure that); a pre-release or git build that matches only
    by prefix is flagged in the message."""
    want = ctx.expect.get("pytorch")
    found = None  # pinned but absent is a failure (unpinned: skip); installed but broken fails in ctx.torch
    with contextlib.suppress(Unsupported):
        found = ctx.torch.__version__
    return _compare("pytorch", want, found, "torch.__version__")


def _dist_check(key, dist):
    def fn(ctx):
        from importlib import metadata  # Python 3.8+, as the probe

        found = None
        with contextlib.suppress(Exception):
            found = metadata.version(dist)
        return _compare(key, ctx.expect.get(key), found, "importlib.metadata %s" % dist)

    fn.__doc__ = (
        "The installed %s distribution matches the catalog entry (prefix match; a pre-release or git "
        "build matching only by prefix is flagged).\n\nNot proven: that %s imports or works."
        % (dist, dist)
    )
    return fn


for _key, _dist, _feature in (
    ("torchvision", "torchvision", "torchvision version"),
    ("torchaudio", "torchaudio", "torchaudio version"),
    ("tensorboard", "tensorboard", "TensorBoard version"),
    ("apex", "apex", "Apex version"),
    ("numpy", "numpy", "NumPy version"),
    ("tensorflow", "tensorflow", "TensorFlow version"),
):
    check("env.version." + _key, _feature, "environment", "smoke")(_dist_check(_key, _dist))


@check("env.version.rocm", "ROCm version", "environment", "smoke")
def version_rocm(ctx):
    """The ROCm release in /opt/rocm*/.info/version (or torch.version.hip) matches.

    Not proven: that the ROCm libraries of that release are all present (inventory audit compares them)."""
    want = ctx.expect.get("rocm")
    found, source = rocm_release(), "/opt/rocm*/.info/version"
    if found is None and ctx.has("torch"):
        found, source = getattr(ctx.torch.version, "hip", None), "torch.version.hip"
    return _compare("rocm", want, found, source)


@check("env.version.cuda", "CUDA version", "environment", "smoke")
def version_cuda(ctx):
    """torch.version.cuda matches the catalog's CUDA version.

    Not proven: the driver's or the CUDA toolkit's version in the image (inventory audit reads those)."""
    want = ctx.expect.get("cuda")
    if not want and not ctx.has("torch"):
        raise Skip(
            "cuda: no torch to ask (torch.version.cuda) and the catalog entry does not pin it"
        )
    return _compare("cuda", want, getattr(ctx.torch.version, "cuda", None), "torch.version.cuda")


@check("env.build.backend", "Framework build matches backend", "environment", "smoke", version=2)
def build_backend(ctx):
    """The torch build matches the image's backend: a rocm image has a HIP build and no CUDA version, a cuda image
    a CUDA build and no HIP version, a cpu image neither (and torch.cuda reports no device); the local
    interpreter, which no catalog declares, is described whatever its build (a CUDA wheel on a host without a
    GPU is a valid environment). On a GPU, every
    visible GPU's arch is in the build's arch list (torch.cuda.get_arch_list()).

    Not proven: that every kernel library of the build works on this GPU (the kernels suite measures those), nor
    anything about GPUs this host does not have."""
    torch = ctx.torch
    backend = ctx.expect.get("backend", "cpu")
    hip, cuda = getattr(torch.version, "hip", None), getattr(torch.version, "cuda", None)
    metrics = dict({"hip": hip, "cuda": cuda, "backend": backend}, **ctx.arch_facts())
    if backend == "rocm" and (not hip or cuda):
        raise Fail(
            "rocm image, but torch.version.hip=%s, torch.version.cuda=%s (want a HIP build)"
            % (hip, cuda),
            metrics,
        )
    if backend == "cuda" and (not cuda or hip):
        raise Fail(
            "cuda image, but torch.version.cuda=%s, torch.version.hip=%s (want a CUDA build)"
            % (cuda, hip),
            metrics,
        )
    if backend == "cpu" and (hip or cuda) and ctx.expect.get("host"):
        return _undeclared_gpu_build(ctx, hip, cuda, metrics)
    if backend == "cpu":
        if hip or cuda:
            raise Fail(
                "cpu image, but torch is a GPU build (torch.version.hip=%s, torch.version.cuda=%s)"
                % (hip, cuda),
                metrics,
            )
        built = getattr(getattr(torch.backends, "cuda", None), "is_built", lambda: False)()
        metrics["cuda_built"] = bool(built)
        if built:
            raise Fail("cpu image, but torch.backends.cuda.is_built() is True", metrics)
        return Report(
            "CPU build of torch: no HIP or CUDA version, torch.backends.cuda.is_built() False",
            metrics,
        )
    if metrics.get("arch_missing"):
        raise Fail(
            'torch was built for %s; no code for this host\'s %s ("no kernel image is available")'
            % (metrics.get("arch_list"), metrics["arch_missing"]),
            metrics,
        )
    where = (" covering this host's %s" % metrics["gpu_archs"]) if metrics.get("gpu_archs") else ""
    return Report(
        "%s build (hip=%s cuda=%s) for %s%s"
        % (backend, hip, cuda, metrics.get("arch_list") or "?", where),
        metrics,
    )


def _undeclared_gpu_build(ctx, hip, cuda, metrics):
    """The local interpreter, which no catalog declares: a GPU build of torch there is a valid
    environment (the package index's default torch is a CUDA build), with or without a GPU."""
    kind = "ROCm (HIP %s)" % hip if hip else "CUDA %s" % cuda
    gpu = "%d GPU(s) visible" % ctx.torch.cuda.device_count() if ctx.gpu_available else "no GPU"
    metrics["described"] = True
    return Report(
        "%s build of torch %s on this host's interpreter (%s): a valid environment, not a "
        "cpu/GPU mismatch; rows that need a GPU %s"
        % (kind, ctx.torch.__version__, gpu, "run" if ctx.gpu_available else "skip"),
        metrics,
    )


@check("smoke.device", "GPU visible", "feature", "smoke", version=2)
def device_visible(ctx):
    """A GPU image sees at least one GPU through the framework; the device found is reported. A CPU image
    claims no GPU: it is skipped with "device: cpu".

    Not proven: that the GPU computes correctly (smoke.tensor_add and the kernels suite do that)."""
    backend = ctx.expect.get("backend", "cpu")
    if backend == "cpu":
        raise Skip(
            "device: %s (a CPU image: no GPU is expected, none is claimed)" % ctx.device_label(),
            {"device": ctx.device_label()},
        )
    if ctx.device_mode == "cpu":
        raise Skip("run CPU-only: device: cpu; GPU checks not run")
    if not ctx.torch.cuda.is_available():
        raise Fail(
            "%s image, but torch.cuda.is_available() is False (device: cpu)%s"
            % (backend, ctx.no_gpu_why())
        )
    n = ctx.torch.cuda.device_count()
    return Report("device: %s (%d device(s))" % (ctx.device_label(), n), {"device_count": n})


@check("smoke.tensor_add", "Tensor op on device", "kernel", "smoke")
def tensor_add(ctx):
    """Element-wise add on the device equals the float64 CPU result exactly.

    Not proven: anything beyond one element-wise kernel."""
    torch = ctx.torch
    a = torch.arange(1, 4097, dtype=torch.float32)
    b = torch.linspace(-3.0, 7.0, 4096, dtype=torch.float32)
    da, db = a.to(ctx.device), b.to(ctx.device)
    got = ctx.observe(lambda: da + db).cpu()
    err = ctx.assert_close(got, a.double() + b.double(), 1e-6, "add")
    return Report(
        "add on %s: rel err %.2e" % (ctx.device, err), {"rel_error": err, "device": ctx.device}
    )


@check(
    "smoke.matmul.fp32", "matmul (float32)", "kernel", "smoke", library="hipBLAS/cuBLAS", unit="s"
)
def matmul_fp32(ctx):
    """A 256x256 float32 matmul on the device against a float64 CPU reference; the result names the BLAS that
    evidence shows ran (GPU kernel names, or the BLAS library mapped into the process / the build's BLAS on the CPU).

    Not proven: other shapes, dtypes or transposes; peak performance."""
    torch = ctx.torch
    g = torch.Generator().manual_seed(0)
    a = torch.randn(256, 256, generator=g)
    b = torch.randn(256, 256, generator=g)
    ref = a.double() @ b.double()
    da, db = a.to(ctx.device), b.to(ctx.device)
    # smoke stays fast: on the CPU the BLAS comes from the mapped libraries / the build's
    # BLAS_INFO, not MKL's verbose mode (slow to switch on; the kernels suite uses it)
    got = ctx.observe(lambda: da @ db, "blas", verbose=False)
    # TF32 on a GPU may legitimately cost ~3 decimal digits.
    tol = 5e-3 if ctx.device != "cpu" else 1e-4
    err = ctx.assert_close(got, ref, tol, "matmul fp32")
    samples = ctx.timeit(lambda: da @ db)
    return Report(
        "rel err %.2e (tol %.0e)" % (err, tol),
        {"rel_error": err, "tolerance": tol, "n": 256},
        samples=samples,
        unit="s",
    )
