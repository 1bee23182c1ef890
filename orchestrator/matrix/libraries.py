"""The seed's "Critical ROCm libraries for PyTorch" table (pure), per image: the version
each image's measured inventory holds, with the library's purpose and what uses it.
A cell is empty where the library does not belong to the image's backend, "not found"
where the image's inventory was measured and holds no such library, and "not measured"
where the library belongs to the image's backend but no inventory was stored."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .document import Table, TCell, TRow


@dataclass(frozen=True)
class Library:
    name: str
    backends: tuple[str, ...]
    purpose: str
    used_in: str
    keys: tuple[str, ...]  # inventory components that name its version, best first


# the seed's rows (rocm-pytorch-compatibility.rst), then their CUDA counterparts: each as
# "name | backends | keys" (Library's fields), then its purpose and what uses it, indented
_TABLE = """
ROCm | rocm | rocm deb:rocm-core
    The ROCm release the libraries come from.
    Every GPU operation.
HIP runtime | rocm | hip deb:hip-runtime-amd pytorch.hip
    Runs kernels and manages device memory.
    Every GPU operation.
Composable Kernel | rocm | composable_kernel deb:composablekernel-dev
    Fast GEMM, convolution and transformation kernels.
    torch.matmul, torch.bmm, torch.nn.Conv2d/Conv3d, torch.nn.MultiheadAttention.
hipBLAS | rocm | hipblas deb:hipblas
    GPU-accelerated BLAS for matrix and vector operations.
    Matrix products, matrix-vector products, tensor contractions.
hipBLASLt | rocm | hipblaslt deb:hipblaslt
    BLAS extension with fused epilogues and integer tensor cores.
    torch.matmul, torch.mm and the GEMMs of linear and convolutional layers.
rocBLAS | rocm | rocblas deb:rocblas
    The BLAS implementation behind hipBLAS.
    Dense and batched linear algebra.
hipCUB | rocm | hipcub deb:hipcub-dev
    Parallel reduction, scan, sort and select.
    torch.sum, torch.cumsum, torch.sort, torch.topk.
hipFFT | rocm | hipfft deb:hipfft
    Fast Fourier transforms on the GPU.
    torch.fft.*, torchaudio transforms.
hipRAND | rocm | hiprand deb:hiprand
    Random number generation on the GPU.
    torch.rand, torch.randn, dropout.
hipSOLVER | rocm | hipsolver deb:hipsolver
    Dense linear solvers and decompositions.
    torch.linalg.solve, svd, eig.
rocSOLVER | rocm | rocsolver deb:rocsolver
    The LAPACK implementation behind hipSOLVER.
    torch.linalg.*.
hipSPARSE | rocm | hipsparse deb:hipsparse
    Sparse matrix operations.
    torch.sparse.mm and sparse tensors.
hipSPARSELt | rocm | hipsparselt deb:hipsparselt
    Structured (2:4) sparse matrix products.
    torch.sparse.to_sparse_semi_structured.
hipTensor | rocm | hiptensor deb:hiptensor
    Tensor contractions and permutations.
    Contractions in custom operators.
MIOpen | rocm | miopen deb:miopen-hip pytorch.built_with.miopen
    Deep learning primitives: convolution, normalisation, RNN.
    torch.nn.Conv*, BatchNorm, LSTM, torch.backends.cudnn flags.
MIGraphX | rocm | migraphx deb:migraphx
    Graph optimisation and inference.
    torch_migraphx, ONNX inference.
MIVisionX | rocm | mivisionx deb:mivisionx
    Computer vision and inference (OpenVX).
    Data pipelines with rocAL.
rocAL | rocm | rocal deb:rocal
    Data loading and augmentation on the GPU.
    Image and video data pipelines.
RCCL | rocm | rccl deb:rccl pytorch.built_with.rccl
    Collective communication between GPUs.
    torch.distributed with the nccl backend.
rocDecode | rocm | rocdecode deb:rocdecode
    Video decoding on the GPU.
    torchvision.io video decoding.
rocJPEG | rocm | rocjpeg deb:rocjpeg
    JPEG decoding on the GPU.
    torchvision.io.decode_jpeg on the device.
RPP | rocm | rpp deb:rpp
    Image, audio and signal processing primitives.
    rocAL pipelines.
rocThrust | rocm | rocthrust deb:rocthrust-dev
    Parallel algorithms (Thrust).
    Sort, scan and reductions in extensions.
rocWMMA | rocm | rocwmma deb:rocwmma-dev
    Matrix multiply-accumulate with matrix cores.
    Mixed-precision GEMM kernels.
MAGMA | rocm cuda | magma deb:magma pytorch.built_with.magma
    Dense linear algebra on GPU and CPU.
    torch.linalg on the GPU.
CUDA | cuda | cuda pytorch.cuda
    The CUDA toolkit release.
    Every GPU operation.
cuDNN | cuda | cudnn pytorch.built_with.cudnn
    Deep learning primitives.
    torch.nn.Conv*, BatchNorm, RNN, SDPA.
NCCL | cuda | nccl pytorch.built_with.nccl
    Collective communication between GPUs.
    torch.distributed with the nccl backend.
UCX | rocm cuda | ucx
    Unified communication transport.
    MPI and RDMA transports.
Open MPI | rocm cuda | ompi
    MPI runtime.
    torch.distributed with the mpi backend.
Triton | rocm cuda | triton
    The compiler torch.compile's Inductor generates GPU kernels with.
    torch.compile (TorchInductor) on the GPU.
NumPy | cpu rocm cuda | numpy pip:numpy
    Array library PyTorch converts to and from.
    torch.from_numpy, Tensor.numpy().
OpenBLAS | cpu | openblas deb:libopenblas0-pthread deb:libopenblas0 pip:scipy-openblas64
    BLAS and LAPACK on the CPU.
    CPU matrix products and torch.linalg on the CPU.
Intel MKL | | mkl pip:mkl
    BLAS, LAPACK and FFT on x86 CPUs.
    CPU matrix products, torch.fft on the CPU.
"""


def _libraries(table: str) -> tuple[Library, ...]:
    lines = table.strip("\n").splitlines()
    out = []
    for head, purpose, used_in in zip(*[iter(lines)] * 3, strict=True):
        name, backends, keys = (f.strip() for f in head.split("|"))
        out.append(
            Library(
                name, tuple(backends.split()), purpose.strip(), used_in.strip(), tuple(keys.split())
            )
        )
    return tuple(out)


LIBRARIES = _libraries(_TABLE)


@dataclass(frozen=True)
class ImageInventory:
    alias: str
    backend: str
    run_id: str | None  # the newest run with an inventory; None: never measured
    components: dict[str, str]


def library_cell(lib: Library, image: ImageInventory, published: str | None = None) -> TCell:
    """The measured version; with ``published`` (what the image's ROCm release publishes for
    the library, images import-releases) that version beside it."""
    have = image.components if image.run_id else {}
    found = next(((key, have[key]) for key in lib.keys if have.get(key)), None)
    if found is not None and image.run_id:
        key, text = found  # a version, no badge
        note = f"inventory component {key}"
        if published:
            text += f" (published {published})"
            note += f"; the release table publishes {published}"
        return TCell(text, "", (), (image.run_id,), note)
    if image.backend not in lib.backends:
        return TCell("")  # not this backend's library: nothing to say
    if image.run_id is None:
        return TCell("not measured", "missing", (), (), "no inventory of this image is stored")
    looked = ", ".join(lib.keys)  # the components that would name the library
    return TCell(
        "not found", "absent", (), (image.run_id,), f"the inventory holds none of: {looked}"
    )


def libraries_table(
    images: Sequence[ImageInventory], published: dict[str, dict[str, str]] | None = None
) -> Table:
    """Rows: the libraries that some image's inventory holds or its backend expects.
    ``published``: alias → library name (lower case) → the version its release publishes."""
    body = []
    published = published or {}
    for lib in LIBRARIES:
        cells = tuple(
            library_cell(lib, img, _published(lib, published.get(img.alias, {}))) for img in images
        )
        if all(not c.text for c in cells):
            continue
        body.append(TRow(lib.name, (lib.name, lib.purpose, lib.used_in), cells))
    notes = (
        "Versions from each image's newest stored inventory (valorch inventory audit, or a run). "
        "Empty: not a library of the image's backend · not found: the measured inventory holds none · "
        "not measured: no inventory of the image is stored.",
    )
    return Table(
        "libraries",
        "Critical libraries",
        ("Library", "Purpose", "Used in"),
        tuple(i.alias for i in images),
        tuple(body),
        notes,
    )


def _published(lib: Library, claims: dict[str, str]) -> str | None:
    names = (lib.name.lower(), lib.name.lower().removesuffix(" runtime"), *lib.keys)
    return next((claims[n] for n in names if claims.get(n)), None)


def backend_of(components: dict[str, str]) -> str:
    """The backend an inventory evidences (a HIP or ROCm component: rocm; CUDA: cuda)."""
    if any(components.get(k) for k in ("rocm", "hip", "pytorch.hip")):
        return "rocm"
    return "cuda" if any(components.get(k) for k in ("cuda", "pytorch.cuda")) else "cpu"


def images_for(
    catalogued: Sequence[tuple[str, str]],
    inventory: dict[str, tuple[str, dict[str, str]]],
    chosen: bool,
) -> list[ImageInventory]:
    """catalogued: (alias, backend) of the catalog images the user chose; inventory: alias →
    (run id, components) of each image's newest inventoried run. Without a choice (no --image)
    only the inventoried images are shown (a catalog of 40 images is not 40 "not measured"
    columns); with one, the chosen catalog images too."""
    backend = dict(catalogued)
    aliases = [a for a, _ in catalogued] if chosen else []
    aliases += [a for a in inventory if a not in aliases]
    return [
        ImageInventory(
            a,
            backend.get(a) or backend_of(inventory.get(a, ("", {}))[1]),
            inventory[a][0] if a in inventory else None,
            inventory.get(a, ("", {}))[1],
        )
        for a in aliases
    ]
