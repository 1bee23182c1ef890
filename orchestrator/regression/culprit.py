"""Which changed component most likely broke a check: the inventory diff between the last
good and the first bad image, ranked by how closely each component relates to the check.

1. **library**: the check's backend library (``MIOpen/cuDNN``, ``hipBLAS/cuBLAS`` …) and the
   components named by its feature or id (a declared ``command.vfmath-dot`` check names
   ``vfmath``);
2. **dependency**: what that library is built on (MIOpen: rocBLAS, hipBLASLt, Composable
   Kernel, HIP, the ROCm runtime …);
3. **framework**: PyTorch, TensorFlow, JAX, Triton, torchvision … and the GPU runtime;
4. **python**: other Python packages;
5. **system**: the OS, dpkg packages and everything else.

Pure: changes and the check's facts in, a ranking out. Within a tier, headline components
come before package listings, then by name."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..spec import Change

TIERS = ("library", "dependency", "framework", "python", "system")

# where a GPU library's operation runs on a CPU host (a --cpu-only run, a CPU image)
CPU_BLAS = ("openblas", "mkl", "blis", "libblas", "liblapack", "onednn", "dnnl", "mkldnn")

# library word (lower case, as checks name them) | the library's own component stems | its
# dependencies, one library a line ("cpu": the CPU side of the same operations); CPU_BLAS
# stands for the CPU BLAS libraries above
_LIBRARIES = """
miopen | miopen | rocblas hipblaslt hipblas composable-kernel composablekernel ck rocrand half hip rocm comgr hsa roctracer rocm-llvm
cudnn | cudnn | cublas cublaslt nvrtc cuda cudart
hipblas | hipblas rocblas | hipblaslt tensile hip rocm comgr hsa CPU_BLAS
hipblaslt | hipblaslt | rocblas hipblas tensile hip rocm hsa
cublas | cublas | cublaslt cuda cudart CPU_BLAS
cublaslt | cublaslt cublas | cuda cudart
hipfft | hipfft rocfft | hip rocm hsa comgr pocketfft fftw mkl
cufft | cufft | cuda cudart pocketfft fftw mkl
hipcub | hipcub rocprim | hip rocm
cub | cub thrust | cuda cudart
hiprand | hiprand rocrand | hip rocm
curand | curand | cuda cudart
hipsolver | hipsolver rocsolver | rocblas hipblas rocsparse magma hip rocm
cusolver | cusolver | cublas cusparse magma cuda cudart
hipsparse | hipsparse rocsparse | rocprim hip rocm
cusparse | cusparse | cuda cudart
hipsparselt | hipsparselt | hipsparse rocsparse hip rocm
cusparselt | cusparselt | cusparse cuda
rccl | rccl | hip rocm ucx ompi ofed libfabric hsa
nccl | nccl | cuda cudart ucx ompi ofed libfabric
gloo | gloo | libuv ibverbs
tensorpipe | tensorpipe | libuv ibverbs
hiprtc | hiprtc comgr | hip rocm rocm-llvm
nvrtc | nvrtc | cuda
roctx | roctx roctracer | rocprofiler hip rocm
nvtx | nvtx | cuda
roctracer | roctracer | rocprofiler hip rocm
cupti | cupti | cuda
composable kernel | composable-kernel composablekernel ck | hip rocm
aotriton | aotriton | triton hip rocm
flashattention | flash-attn flash-attention flashattention | triton cuda cudart
migraphx | migraphx | miopen rocblas hip rocm
tensorrt | tensorrt | cudnn cublas cuda
xla | xla jaxlib tensorflow | cuda rocm
rocjpeg | rocjpeg | rocdecode hip rocm
nvjpeg | nvjpeg | cuda
cpu | CPU_BLAS | openmp gomp libgomp tbb
"""


def _stems(words: str) -> tuple[str, ...]:
    return tuple(s for w in words.split() for s in (CPU_BLAS if w == "CPU_BLAS" else (w,)))


LIBRARIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    word.strip(): (_stems(own), _stems(deps))
    for word, own, deps in (line.split("|") for line in _LIBRARIES.strip().splitlines())
}
FRAMEWORK = (
    *("pytorch", "torch", "torchvision", "torchaudio", "tensorflow", "jax", "jaxlib", "triton"),
    *("pytorch-triton", "pytorch-triton-rocm", "apex", "onnxruntime", "deepspeed", "numpy"),
    *("cuda", "rocm", "hip", "magma"),
)
# check words that name no component (a check id's kind and dtype words)
NOISE = {
    *("smoke", "kernels", "kernel", "features", "feature", "command", "pytest", "compile"),
    *("profiler", "tf", "selftest", "check"),
    *("fp32", "fp16", "bf16", "fp64", "float32", "float16", "bfloat16", "int8", "dtype"),
    *("the", "and", "with", "a", "of", "on", "in"),
}


@dataclass(frozen=True)
class Suspect:
    change: Change
    tier: str  # one of TIERS
    why: str  # what relates it to the check

    @property
    def rank(self) -> int:
        return TIERS.index(self.tier)


def stem(component: str) -> str:
    """``deb:miopen-hip`` -> ``miopen-hip``; ``pip:torch`` -> ``torch``; lower case, ``_`` as ``-``."""
    name = component.split(":", 1)[1] if ":" in component else component
    return name.lower().replace("_", "-")


def libraries_of(library: str | None) -> list[str]:
    """``MIOpen/cuDNN`` -> ["miopen", "cudnn"] (the keys of LIBRARIES it names)."""
    keys = [part.strip().lower() for part in re.split(r"[/,]", library or "")]
    named = [k if k in LIBRARIES else k.replace(" ", "") for k in keys]  # "hip blas": hipblas
    return [k for k in named if k in LIBRARIES]


def _bare(token: str) -> str:
    """A name's word without the ``lib`` of a shared library and the soname's trailing
    digits: ``libopenmpt0`` -> ``openmpt``, ``libgomp1`` -> ``gomp``, ``cudnn9`` -> ``cudnn``."""
    if token.startswith("lib") and len(token) > 3:
        token = token[3:]
    return token.rstrip("0123456789") or token


def _hits(name: str, stems: Iterable[str]) -> str | None:
    """The first stem that names the component ``name``: by whole words, never a substring
    (``openmp`` is not ``libopenmpt0``, ``hipblas`` is not ``hipblaslt``, ``torch`` is not
    ``torchvision``). The stem's words must stand in a row among the name's words, each
    compared without a shared library's ``lib`` and its soname's digits (``libgomp1`` is
    ``gomp``, ``nvidia-cudnn-cu12`` holds ``cudnn``, ``rocm-llvm`` is ``rocm-llvm``)."""
    words = [_bare(w) for w in re.split(r"[^a-z0-9]+", name) if w]
    for s in stems:
        parts = [_bare(p) for p in re.split(r"[^a-z0-9]+", s) if p]
        n = len(parts)
        if n and any(words[i : i + n] == parts for i in range(len(words) - n + 1)):
            return s
    return None


def classify(component: str, check: str, library: str | None, feature: str = "") -> tuple[str, str]:
    """(tier, why) of one component for one check."""
    name = stem(component)
    libs = libraries_of(library)
    for lib in libs:
        if _hits(name, LIBRARIES[lib][0]):
            return "library", f"the check's library {lib}"
    words = re.split(r"[^a-z0-9]+", f"{check} {feature}".lower())
    named = {w for w in words if len(w) > 1 and w not in NOISE} - {
        "".join(ch for ch in lib if ch.isalnum()) for lib in libs
    }
    hit = _hits(name, named)
    if hit:
        return "library", f"named by the check ({hit})"
    for lib in libs:
        hit = _hits(name, LIBRARIES[lib][1])
        if hit:
            return "dependency", f"{lib} depends on {hit}"
    hit = _hits(name, _frameworks(check))
    if hit:
        return "framework", f"framework or runtime ({hit})"
    if component.startswith("pip:"):
        return "python", "a Python package"
    return "system", "system library or tool" if component.startswith("deb:") else "image component"


def _frameworks(check: str) -> tuple[str, ...]:
    """FRAMEWORK with the check's own framework first (FRAMEWORK starts with PyTorch's)."""
    own = _own_framework(check)
    return own + tuple(f for f in FRAMEWORK if f not in own)


def _own_framework(check: str) -> tuple[str, ...]:
    """The framework a check runs in (its package stems): TensorFlow for ``tf.*``, JAX for
    ``jax.*``, PyTorch otherwise."""
    if check.startswith("tf."):
        return ("tensorflow",)
    if check.startswith("jax."):
        return ("jax", "jaxlib")
    return ("pytorch", "torch")


def _suspect(c: Change, check: str, library: str | None, feature: str) -> Suspect:
    """The check's own framework removed comes first: nothing the check runs on is left."""
    if c.kind == "removed" and stem(c.subject) in _own_framework(check):
        return Suspect(c, "library", f"the check's framework ({stem(c.subject)}) was removed")
    return Suspect(c, *classify(c.subject, check, library, feature))


def rank(
    changes: Sequence[Change], check: str, library: str | None, feature: str = ""
) -> list[Suspect]:
    """The changes as suspects, most related to the check first; frameworks in the order of
    how directly the check runs on them (its own framework, then the rest). ``library``
    names what the check ran on: a GPU library, or ``cpu`` where it ran on the CPU (a CPU
    image: hipBLAS's dependencies say nothing there)."""
    out = [_suspect(c, check, library, feature) for c in changes if c.kind != "unchanged"]
    order = _frameworks(check)

    def within(s: Suspect) -> int:
        if s.tier != "framework":
            return 0
        hit = _hits(stem(s.change.subject), order)
        return order.index(hit) if hit else len(order)

    return sorted(
        out,
        key=lambda s: (
            s.rank,
            "was removed" not in s.why,  # a removed framework before any library change
            within(s),
            ":" in s.change.subject,
            s.change.subject,
        ),
    )
