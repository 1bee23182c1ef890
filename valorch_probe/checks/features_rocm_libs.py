"""features: the critical ROCm libraries of the seed that had no check. Where a
public API reaches the library from Python it is exercised (Composable Kernel
through torch's preferred BLAS backend, hipSPARSELt through semi-structured
sparsity, MIGraphX through its Python bindings); where none does, the check
proves presence and version from the image (library file, version header, dpkg
entry) and, where the library has a host-side C entry point (``_rocm_host``),
calls it through ctypes: ``partial`` "present, host API called" or "present,
not exercised", never a pass: a pass means the row's feature ran. A row whose claim needs a GPU (CK's GEMM, MIGraphX's GPU
target, hipSPARSELt's kernels) is a skip without one.

Every row declares ``needs`` "amd" (n/a on other images: orchestrator/executors/transcript.py);
absent in a rocm image: unsupported. These paths have not run on a ROCm image yet (see
docs/checks.md)."""

from __future__ import annotations

import glob
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .. import evidence, read_text
from ..context import Fail, Partial, Report, Skip, Unsupported
from ..inventory_parse import parse_dpkg_status, parse_header_version
from ..registry import check, checks_of
from . import _rocm_host
from ._common import attempt, randn

amd_gpu_feature = checks_of("feature", "features", needs=("gpu", "amd"))


DPKG_STATUS = "/var/lib/dpkg/status"


def presence(
    libs: Sequence[str],
    headers: Sequence[Tuple[str, str]],
    packages: Sequence[str],
    roots: Optional[List[str]] = None,
    status_path: str = DPKG_STATUS,
) -> Dict[str, Any]:
    """What of a library the image holds: shared/static library files under the ROCm
    roots, a version from a version header (relative path, macro prefix) and dpkg."""
    if roots is None:
        roots = sorted(set(glob.glob("/opt/rocm") + glob.glob("/opt/rocm-*")), reverse=True)
    found_libs = []  # type: List[str]
    for root in roots:
        for pattern in libs:
            found_libs += sorted(glob.glob(os.path.join(root, "lib", pattern)))
    said = (
        (parse_header_version(read_text(path, 1 << 20), prefix), path)
        for root in roots
        for rel, prefix in headers
        for path in [os.path.join(root, "include", rel)]
        if os.path.exists(path)
    )
    version, source = next(((v, path) for v, path in said if v), (None, None))
    pkgs = {
        p["Package"]: p.get("Version", "")
        for p in parse_dpkg_status(read_text(status_path, 1 << 20))
        if p["Package"] in packages
    }
    if version is None and pkgs:
        name = sorted(pkgs)[0]
        version, source = pkgs[name], "dpkg %s" % name
    return {
        "libraries": found_libs[:6],
        "version": version,
        "version_source": source,
        "packages": pkgs,
    }


def presence_summary(name: str, facts: Dict[str, Any]) -> str:
    where = facts["libraries"][0] if facts["libraries"] else (facts["version_source"] or "dpkg")
    return "%s %s in the image (%s; version from %s)" % (
        name,
        facts["version"] or "(version unknown)",
        where,
        facts["version_source"] or "nowhere",
    )


def presence_metrics(facts: Dict[str, Any], proven: str) -> Dict[str, Any]:
    return {
        "proven": proven,
        "version": facts["version"],
        "version_source": facts["version_source"],
        "files": ";".join(facts["libraries"])[:500],
    }


NO_API = "no Python API exercises it"


def presence_report(
    name: str, facts: Dict[str, Any], exercised: Optional[str] = None, why: str = NO_API
) -> Report:
    """A pass when the library ran (``exercised`` says how); otherwise ``partial``
    "present, not exercised": presence is not the row's claim, and must not read as one."""
    if exercised:
        return Report(
            "%s %s: %s" % (name, facts["version"] or "(version unknown)", exercised),
            presence_metrics(facts, "exercised"),
        )
    raise Partial(
        "partial support: present, not exercised: %s; %s" % (presence_summary(name, facts), why),
        presence_metrics(facts, "presence"),
    )


def host_call_report(name: str, facts: Dict[str, Any], row_use: str) -> Report:
    """A library with a host-side C entry point (``_rocm_host.HOST_CALLS``): loaded with ctypes and
    called. Still ``partial``: the call proves the library loads and answers, not the row's feature.
    A library file the loader refuses, or a call that answers wrongly, is a ``fail`` with the evidence;
    a library without the entry point (an older release) stays "present, not exercised"."""
    stem, call = _rocm_host.HOST_CALLS[name]
    lib, path, error = _rocm_host.load(facts["libraries"], stem)
    if lib is None and error:
        raise Fail(
            "%s is installed but cannot be loaded: %s" % (name, error),
            presence_metrics(facts, "presence"),
        )
    if lib is None:
        return presence_report(name, facts, why="no %s* file to call into" % stem)
    try:
        done = call(lib)
    except _rocm_host.NoEntryPointError as exc:
        return presence_report(
            name, facts, why="%s exports no host entry point valorch calls: %s" % (path, exc)
        )
    except _rocm_host.HostCallError as exc:
        raise Fail(
            "%s's host API answered wrongly (%s): %s" % (name, path, exc),
            presence_metrics(facts, "presence"),
        ) from exc
    metrics = dict(presence_metrics(facts, "host-call"), host_call=done[:300], library_file=path)
    raise Partial(
        "partial support: present, host API called, %s not exercised: %s; through ctypes: %s"
        % (row_use, presence_summary(name, facts), done),
        metrics,
    )


def _presence_check(
    name: str,
    libs: Sequence[str],
    header_paths: Sequence[str],
    packages: Sequence[str],
    row_use: str,
    no_call: str = NO_API,
) -> None:
    """The row ``features.rocm.<name, lower case>``, whose headers' version macros are named
    after it too."""
    headers = [(h, name.lower()) for h in header_paths]

    def fn(ctx):
        facts = presence(libs, headers, packages)
        if not (facts["libraries"] or facts["packages"] or facts["version_source"]):
            raise Unsupported(
                "%s is not in this image: no %s under /opt/rocm*/lib, no version header, no dpkg "
                "entry %s" % (name, "/".join(libs) or "library file", "/".join(packages))
            )
        if name in _rocm_host.HOST_CALLS:
            return host_call_report(name, facts, row_use)
        return presence_report(name, facts, why=no_call)

    if name in _rocm_host.HOST_CALLS:
        proven = (
            "Presence, and that %s loads and answers a host-side C call through ctypes without a GPU (see "
            'Host entry points): the result is partial "present, host API called", never a pass; a '
            "library the loader refuses or a wrong answer is a fail"
            % _rocm_host.HOST_CALLS[name][0]
        )
    else:
        proven = (
            'Only presence is proven (%s): the result is partial "present, not exercised", never a pass'
            % no_call
        )
    fn.__doc__ = (
        "%s is present in the image: a library file (%s) or version header (%s) under /opt/rocm*, or a "
        "dpkg package (%s), with its version. %s.\n\n"
        "Not proven: that %s works on this GPU (%s)."
        % (
            name,
            ", ".join(libs) or "none",
            ", ".join(h for h, _ in headers) or "none",
            ", ".join(packages),
            proven,
            name,
            row_use,
        )
    )
    version = 3 if name in _rocm_host.HOST_CALLS else 2
    cid = "features.rocm." + name.lower()
    check(cid, name, "feature", "features", library=name, version=version, needs=("amd",))(fn)


HEADER_ONLY = (
    "a header-only library (templates compiled into the caller's kernels): no library file, no entry "
    "point to call without a HIP compiler and a GPU"
)

_presence_check(
    "hipTensor",
    ["libhiptensor.so*"],
    ["hiptensor/hiptensor-version.hpp", "hiptensor/internal/hiptensor-version.hpp"],
    ["hiptensor", "hiptensor-dev"],
    "tensor contractions",
)
_presence_check(
    "MIVisionX",
    ["libopenvx.so*", "libvx_*.so*"],
    ["mivisionx/vx_ext_amd.h"],
    ["mivisionx", "mivisionx-dev"],
    "OpenVX graphs, preprocessing",
)
_presence_check(
    "rocAL",
    ["librocal.so*"],
    ["rocal/rocal_api_info.h"],
    ["rocal", "rocal-dev"],
    "data-loading pipelines",
)
_presence_check(
    "rocDecode",
    ["librocdecode.so*"],
    ["rocdecode/rocdecode_version.h", "rocdecode/rocdecode.h"],
    ["rocdecode", "rocdecode-dev"],
    "hardware video decoding",
)
_presence_check(
    "RPP",
    ["librpp.so*"],
    ["rpp/rpp_version.h"],
    ["rpp", "rpp-dev"],
    "image augmentation kernels",
)
_presence_check(
    "rocThrust",
    [],
    ["thrust/rocthrust_version.hpp", "rocthrust/rocthrust_version.hpp"],
    ["rocthrust-dev", "rocthrust"],
    "parallel algorithms compiled into kernels",
    HEADER_ONLY,
)
_presence_check(
    "rocWMMA",
    [],
    ["rocwmma/rocwmma-version.hpp", "rocwmma/internal/rocwmma-version.hpp"],
    ["rocwmma-dev", "rocwmma"],
    "matrix-core GEMM fragments compiled into kernels",
    HEADER_ONLY,
)


def ck_refusal(pref: Any) -> str:
    """What torch said when it refused CK as its BLAS library, or "" when it took it.
    Context::setBlasPreferredBackend refuses CK on an arch outside Context::ckSupported()'s list or
    in a build without CK GEMMs ("Cannot set preferred blas backend to CK since following conditions
    are not true: architecture supported for CK: 0, ..."); releases before that check only warned
    ("Attempting to use CK on an unsupported architecture! Cannot set backend to CK") and kept
    their backend (pytorch/pytorch aten/src/ATen/Context.cpp, Context::ckSupported)."""
    import warnings

    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            pref("ck")
        except RuntimeError as exc:
            if "Cannot set preferred blas backend to CK" not in str(exc):
                raise
            return str(exc).splitlines()[0][:300]
    now = str(pref()).rsplit(".", 1)[-1]  # torch._C._BlasBackend.Ck
    if now.lower() == "ck":
        return ""
    words = "; ".join(str(w.message).splitlines()[0] for w in said)[:300]
    return "preferred_blas_library('ck') left the backend at %s%s" % (
        now,
        ": " + words if words else "",
    )


@amd_gpu_feature(
    "features.rocm.composable_kernel", "Composable Kernel", library="Composable Kernel", version=3
)
def composable_kernel(ctx):
    """With torch's preferred BLAS library set to Composable Kernel (torch.backends.cuda.preferred_blas_library("ck"),
    ROCm builds), a bfloat16 GEMM on the GPU is correct and torch.profiler records a CK kernel. Without a GPU: skip
    (the presence found is in the message); on a GPU whose torch has no such API: partial "present, not exercised";
    where torch refuses CK (an arch outside Context::ckSupported(), a build without CK GEMMs): unsupported.

    Not proven: CK's convolutions or attention kernels, or its performance."""
    facts = presence(
        ["libdevice_*operations*", "libck*.so*"],
        [("ck/version.h", "ck")],
        ["composablekernel-dev", "composablekernel"],
    )
    found = facts["libraries"] or facts["packages"] or facts["version_source"]
    if not ctx.gpu_available:
        raise Skip(
            "needs a GPU: the row claims GEMMs run on CK kernels (device: cpu); %s"
            % (presence_summary("Composable Kernel", facts) if found else "CK not found either"),
            presence_metrics(facts, "nothing"),
        )
    torch = ctx.torch
    if ctx.vendor != "amd":
        raise Skip("Composable Kernel is a ROCm library; this torch is not a HIP build")
    pref = getattr(getattr(torch.backends, "cuda", None), "preferred_blas_library", None)
    if pref is None:
        if not found:
            raise Unsupported(
                "Composable Kernel is not in this image: no ck/version.h, no CK library, no "
                "composablekernel package"
            )
        return presence_report("Composable Kernel", facts)
    old = pref()
    try:
        refused = ck_refusal(pref)
        if refused:
            raise Unsupported(
                "this torch refuses Composable Kernel on %s: %s" % (ctx.gpu_arch(), refused)
            )
        a, b = (
            randn(torch, 256, 256, seed=140).bfloat16(),
            randn(torch, 256, 256, seed=141).bfloat16(),
        )
        got = attempt("bf16 GEMM with CK", lambda: ctx.observe(lambda: a.cuda() @ b.cuda()))
    finally:
        pref(old)
    err = ctx.assert_close(got, a.double() @ b.double(), 3e-2, "CK bf16 GEMM")
    kernels = ctx.seen.kernels if ctx.seen else []
    if "Composable Kernel" not in evidence.libraries_of(kernels, "amd"):
        raise Fail(
            "preferred_blas_library('ck') was accepted, but no CK kernel ran: %s"
            % "; ".join(kernels[:4]),
            {"rel_error": err},
        )
    return presence_report(
        "Composable Kernel", facts, "a bf16 GEMM ran on CK kernels, rel err %.1e" % err
    )


@amd_gpu_feature("features.rocm.hipsparselt", "hipSPARSELt", library="hipSPARSELt", version=3)
def hipsparselt(ctx):
    """A 2:4 semi-structured sparse float16 weight (torch.sparse.to_sparse_semi_structured) multiplies a dense
    matrix on an AMD GPU; the result matches float64 and the profiler names hipSPARSELt's kernels (another
    library's kernels: partial; no kernel recorded: skip "not measurable"). Without a GPU: skip; on a CUDA
    image: n/a (cuSPARSELt / CUTLASS would run, not hipSPARSELt).

    Not proven: other sparsity patterns, int8, or speed-ups."""
    facts = presence(
        ["libhipsparselt.so*"],
        [("hipsparselt/hipsparselt-version.h", "hipsparselt")],
        ["hipsparselt", "hipsparselt-dev"],
    )
    if not (facts["libraries"] or facts["packages"] or facts["version_source"]):
        raise Unsupported(
            "hipSPARSELt is not in this image: no libhipsparselt, no version header, no dpkg entry"
        )
    torch = ctx.torch
    to_sparse = ctx.require_attr(torch, "sparse.to_sparse_semi_structured")
    ctx.require_gpu()
    w = randn(torch, 128, 128, seed=142)
    mask = torch.tensor([1.0, 1.0, 0.0, 0.0]).repeat(128, 32)  # 2 of every 4 kept
    w = (w * mask).half()
    x = randn(torch, 128, 64, seed=143).half()
    sw = attempt("to_sparse_semi_structured", lambda: to_sparse(w.cuda()))
    got = attempt(
        "semi-structured sparse matmul", lambda: ctx.observe(lambda: torch.mm(sw, x.cuda()))
    )
    err = ctx.assert_close(got, w.double() @ x.double(), 1e-2, "2:4 sparse x dense")
    libs = ctx.seen.libraries if ctx.seen else []
    kernels = ctx.seen.kernels if ctx.seen else []
    metrics = dict(
        presence_metrics(facts, "presence"), rel_error=err, kernels=";".join(kernels)[:500]
    )
    if "hipSPARSELt" in libs:
        return presence_report(
            "hipSPARSELt",
            facts,
            "2:4 sparse float16 matmul ran hipSPARSELt kernels, rel err %.1e" % err,
        )
    if not kernels:
        raise Skip(
            "not measurable: the 2:4 sparse matmul is correct (rel err %.1e), but the profiler recorded "
            "no kernel to tell which library ran it" % err,
            metrics,
        )
    raise Partial(
        "partial support: the 2:4 sparse matmul is correct (rel err %.1e), but its kernels are %s's, not "
        "hipSPARSELt's: %s"
        % (err, evidence.label(libs) or "no known library", "; ".join(kernels[:3])),
        metrics,
    )


@amd_gpu_feature("features.rocm.migraphx", "MIGraphX", library="MIGraphX", version=2)
def migraphx(ctx):
    """The migraphx Python bindings build a program (x + x), compile it for the GPU target and run it: the
    result is 2x. Without a GPU the program runs on the "ref" (CPU reference) target only to tell working
    bindings (skip: the GPU target was not proven) from broken ones (fail).

    Not proven: ONNX import, mixed precision, or torch_migraphx."""
    try:
        mx = ctx.load("migraphx")
    except Unsupported as exc:
        facts = presence(
            ["libmigraphx.so*"], [("migraphx/version.h", "migraphx")], ["migraphx", "migraphx-dev"]
        )
        if facts["libraries"] or facts["packages"]:
            raise Fail(
                "MIGraphX is installed (%s) but its Python bindings are not importable"
                % (facts["libraries"] or sorted(facts["packages"]))[0]
            ) from exc
        raise Unsupported(
            "MIGraphX is not in this image: no migraphx Python module, no libmigraphx, no dpkg "
            "entry"
        ) from exc
    np = ctx.load("numpy")
    target = "gpu" if ctx.gpu_available else "ref"
    p = mx.program()
    m = p.get_main_module()
    x = m.add_parameter("x", mx.shape(type="float_type", lens=[8]))
    m.add_return([m.add_instruction(mx.op("add"), [x, x])])
    attempt("migraphx compile for %s" % target, lambda: p.compile(mx.get_target(target)))
    data = np.arange(8, dtype=np.float32)
    out = p.run({"x": mx.argument(data)})
    got = np.array(out[0].tolist(), dtype=np.float64)
    if list(got) != list(2.0 * data):
        raise Fail("MIGraphX x + x on %s gave %s" % (target, list(got)))
    version = getattr(mx, "__version__", None)
    if target == "ref":  # the CPU reference target is not the row's claim (MIGraphX on the GPU)
        raise Skip(
            "needs a GPU: the row claims MIGraphX compiles for the GPU (device: cpu); its bindings "
            "work (x + x correct on the ref target)",
            {"target": target, "proven": "bindings"},
        )
    return Report(
        "MIGraphX %s: program compiled for the %s target and ran x + x correctly"
        % (version or "", target),
        {"target": target, "proven": "exercised"},
    )
