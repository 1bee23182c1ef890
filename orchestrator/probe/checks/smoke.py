"""smoke: environment facts, the framework build, a tensor op and a matmul on
the device, and the versions found against the image's catalog entry."""

from __future__ import annotations

import platform
import sys

from ..context import Fail, Report, Skip
from ..registry import check, suite
from ._versions import matches, os_release, rocm_release

suite("smoke", "torch", "Is this image alive? Facts, versions against the catalog, one op and one matmul on the device.")


def _dist_version(name: str):
    try:
        from importlib import metadata  # Python 3.8+
    except ImportError:  # pragma: no cover
        return None
    try:
        return metadata.version(name)
    except Exception:
        return None


@check("env.facts", "Environment facts", "environment", "smoke")
def env_facts(ctx):
    """Python, OS, framework build and visible devices (recorded as metrics)."""
    osr = os_release()
    facts = {"python": platform.python_version(), "os_id": osr.get("ID"),
             "os_version": osr.get("VERSION_ID"), "machine": platform.machine()}
    if ctx.has("torch"):
        torch = ctx.torch
        facts.update(torch=torch.__version__, torch_hip=getattr(torch.version, "hip", None),
                     torch_cuda=getattr(torch.version, "cuda", None),
                     gpu_available=ctx.gpu_available, device=ctx.device,
                     device_count=torch.cuda.device_count() if ctx.gpu_available else 0)
        if ctx.gpu_available:
            facts["device_name"] = torch.cuda.get_device_name(0)
            props = torch.cuda.get_device_properties(0)
            arch = getattr(props, "gcnArchName", None)
            facts["device_arch"] = arch or "sm_%d%d" % (props.major, props.minor)
    else:
        facts["torch"] = None
    return Report("%s on %s %s" % (facts.get("torch") or "no torch", facts["os_id"], facts["os_version"]),
                  metrics=facts)


def _expected(ctx, key):
    want = ctx.expect.get(key)
    if not want:
        raise Skip("the catalog entry does not pin %s" % key)
    return want


def _compare(key, want, found, source):
    if found is None:
        raise Fail("%s: expected %s, not found (%s)" % (key, want, source), {"expected": want, "found": None})
    if not matches(want, found):
        raise Fail("%s: expected %s, found %s (%s)" % (key, want, found, source),
                   {"expected": want, "found": found})
    return Report("%s %s matches %s (%s)" % (key, found, want, source), {"expected": want, "found": found})


@check("env.version.python", "Python version", "environment", "smoke")
def version_python(ctx):
    """The interpreter's version matches the catalog entry (prefix match)."""
    return _compare("python", _expected(ctx, "python"), platform.python_version(), sys.executable)


@check("env.version.os", "OS release", "environment", "smoke")
def version_os(ctx):
    """/etc/os-release names the distribution and release of the catalog entry."""
    osr = os_release()
    for distro in ("ubuntu", "debian", "rhel", "rocky", "almalinux", "sles"):
        if ctx.expect.get(distro):
            if osr.get("ID") != distro:
                raise Fail("os: expected %s %s, found %s %s" % (distro, ctx.expect[distro], osr.get("ID"),
                                                               osr.get("VERSION_ID")))
            return _compare(distro, ctx.expect[distro], osr.get("VERSION_ID"), "/etc/os-release")
    raise Skip("the catalog entry does not pin the OS release")


@check("env.version.pytorch", "PyTorch version", "environment", "smoke")
def version_pytorch(ctx):
    """torch.__version__ matches the catalog's PyTorch version."""
    want = _expected(ctx, "pytorch")
    found = ctx.torch.__version__ if ctx.has("torch") else None  # pinned but absent is a failure
    return _compare("pytorch", want, found, "torch.__version__")


def _dist_check(key, dist):
    def fn(ctx):
        want = _expected(ctx, key)
        return _compare(key, want, _dist_version(dist), "importlib.metadata %s" % dist)
    fn.__doc__ = "The installed %s distribution matches the catalog entry." % dist
    return fn


for _key, _dist, _feature in (("torchvision", "torchvision", "torchvision version"),
                              ("torchaudio", "torchaudio", "torchaudio version"),
                              ("tensorboard", "tensorboard", "TensorBoard version"),
                              ("apex", "apex", "Apex version"),
                              ("numpy", "numpy", "NumPy version"),
                              ("tensorflow", "tensorflow", "TensorFlow version")):
    check("env.version." + _key, _feature, "environment", "smoke")(_dist_check(_key, _dist))


@check("env.version.rocm", "ROCm version", "environment", "smoke")
def version_rocm(ctx):
    """The ROCm release in /opt/rocm*/.info/version (or torch.version.hip) matches."""
    want = _expected(ctx, "rocm")
    found, source = rocm_release(), "/opt/rocm*/.info/version"
    if found is None and ctx.has("torch"):
        found, source = getattr(ctx.torch.version, "hip", None), "torch.version.hip"
    return _compare("rocm", want, found, source)


@check("env.version.cuda", "CUDA version", "environment", "smoke")
def version_cuda(ctx):
    """torch.version.cuda matches the catalog's CUDA version."""
    want = _expected(ctx, "cuda")
    return _compare("cuda", want, getattr(ctx.torch.version, "cuda", None), "torch.version.cuda")


@check("env.build.backend", "Framework build matches backend", "environment", "smoke")
def build_backend(ctx):
    """A rocm image has a HIP build of torch (torch.version.hip), a cuda image a CUDA build."""
    torch = ctx.torch
    backend = ctx.expect.get("backend", "cpu")
    hip, cuda = getattr(torch.version, "hip", None), getattr(torch.version, "cuda", None)
    metrics = {"hip": hip, "cuda": cuda, "backend": backend}
    if backend == "rocm" and not hip:
        raise Fail("rocm image, but torch is not a HIP build (torch.version.hip is None)", metrics)
    if backend == "cuda" and not cuda:
        raise Fail("cuda image, but torch is not a CUDA build (torch.version.cuda is None)", metrics)
    return Report("torch build: hip=%s cuda=%s" % (hip, cuda), metrics)


@check("smoke.device", "GPU visible", "feature", "smoke")
def device_visible(ctx):
    """A GPU image sees at least one GPU through the framework."""
    backend = ctx.expect.get("backend", "cpu")
    if backend == "cpu":
        return Report("CPU image: device is %s" % ctx.device, {"device": ctx.device})
    if ctx.device_mode == "cpu":
        raise Skip("run CPU-only: GPU checks not run")
    if not ctx.torch.cuda.is_available():
        raise Fail("%s image, but torch.cuda.is_available() is False" % backend)
    n = ctx.torch.cuda.device_count()
    return Report("%d device(s): %s" % (n, ctx.torch.cuda.get_device_name(0)), {"device_count": n})


@check("smoke.tensor_add", "Tensor op on device", "kernel", "smoke")
def tensor_add(ctx):
    """Element-wise add on the device equals the float64 CPU result exactly."""
    torch = ctx.torch
    a = torch.arange(1, 4097, dtype=torch.float32)
    b = torch.linspace(-3.0, 7.0, 4096, dtype=torch.float32)
    got = (a.to(ctx.device) + b.to(ctx.device)).cpu()
    err = ctx.assert_close(got, a.double() + b.double(), 1e-6, "add")
    return Report("add on %s: rel err %.2e" % (ctx.device, err), {"rel_error": err, "device": ctx.device})


@check("smoke.matmul.fp32", "matmul (float32)", "kernel", "smoke", library="hipBLAS/cuBLAS", unit="s")
def matmul_fp32(ctx):
    """A 256x256 float32 matmul on the device against a float64 CPU reference."""
    torch = ctx.torch
    g = torch.Generator().manual_seed(0)
    a = torch.randn(256, 256, generator=g)
    b = torch.randn(256, 256, generator=g)
    ref = a.double() @ b.double()
    da, db = a.to(ctx.device), b.to(ctx.device)
    got = da @ db
    # TF32 on a GPU may legitimately cost ~3 decimal digits.
    tol = 5e-3 if ctx.device != "cpu" else 1e-4
    err = ctx.assert_close(got, ref, tol, "matmul fp32")
    samples = ctx.timeit(lambda: da @ db)
    return Report("rel err %.2e (tol %.0e)" % (err, tol), {"rel_error": err, "tolerance": tol, "n": 256},
                  samples=samples, unit="s")
