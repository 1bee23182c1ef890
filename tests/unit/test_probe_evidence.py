"""What the probe concludes from text it sees: GPU kernel names -> library, CPU
verbose lines and build configs -> CPU library, exception text -> status, arch
lists -> coverage, versions -> pre-release warnings. The inputs are recorded real
outputs (tests/fixtures/evidence, tests/fixtures/inventory), so the GPU-side
classification is tested here although no GPU runs these tests."""

from pathlib import Path

import pytest

from valorch_probe import evidence
from valorch_probe.checks._versions import matches, prefix_warning, prerelease
from valorch_probe.checks.features_cuda import gpu_process_list
from valorch_probe.context import Fail, Unsupported, import_outcome

FIX = Path(__file__).resolve().parents[1] / "fixtures"
GPU_LIBRARIES = (
    "hipBLAS",
    "rocBLAS",
    "hipBLASLt",
    "cuBLAS",
    "MIOpen",
    "cuDNN",
    "rocFFT",
    "hipFFT",
    "cuFFT",
    "hipCUB",
    "rocPRIM",
    "CUB",
    "hipRAND",
    "cuRAND",
    "hipSOLVER",
    "cuSOLVER",
    "hipSPARSE",
    "cuSPARSE",
    "RCCL",
    "NCCL",
    "FlashAttention",
    "AOTriton",
    "Tensile",
    "Composable Kernel",
    "rocJPEG",
    "nvJPEG",
)


def kernel_rows():
    """kernel-names.tsv and every kernel-names-LABEL.tsv a recorded GPU added (hosts/record_fixtures.py)."""
    rows = []
    for path in sorted((FIX / "evidence").glob("kernel-names*.tsv")):
        for line in path.read_text().splitlines():
            if line and not line.startswith("#"):
                name, vendor, lib = line.split("\t")
                rows.append((name, vendor, None if lib == "-" else lib))
    return rows


@pytest.mark.parametrize(
    "name,vendor,lib", kernel_rows(), ids=lambda v: v[:40] if isinstance(v, str) else v
)
def test_recorded_kernel_names_name_their_library(name, vendor, lib):
    assert evidence.library_of_kernel(name, vendor) == lib


def test_every_pattern_is_commented_and_compiles():
    src = (Path(evidence.__file__)).read_text()
    table = src[src.index("KERNEL_LIBRARIES = (") : src.index("NATIVE = ")]
    entries = [ln for ln in table.splitlines() if ln.strip().startswith("(r")]
    comments = [ln for ln in table.splitlines() if ln.strip().startswith("#")]
    assert len(entries) == len(evidence.KERNEL_LIBRARIES) and len(comments) >= len(entries) - 6


def test_libraries_of_a_profile_put_real_libraries_before_aten():
    names = [n for n, v, _ in kernel_rows() if v == "amd"]
    libs = evidence.libraries_of(names, "amd")
    assert libs[0] == "MIOpen" and "PyTorch (ATen native)" not in libs
    assert evidence.libraries_of(["void at::native::reduce_kernel<512, 1>"], "nvidia") == [
        "PyTorch (ATen native)"
    ]
    # vendor keeps ROCm names off CUDA runs and the reverse
    assert evidence.library_of_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "amd") == "RCCL"
    assert evidence.library_of_kernel("Cijk_Ailk_Bljk_SB_MT64x64x8", "nvidia") is None
    assert (
        evidence.label([]) is None and evidence.label(["MIOpen", "rocBLAS"]) == "MIOpen + rocBLAS"
    )


def test_cpu_verbose_lines_recorded_on_this_host():
    text = (FIX / "evidence" / "cpu-verbose-mkl-onednn.txt").read_text()
    libs, calls = evidence.cpu_libraries_from_verbose(text)
    assert libs == ["MKL", "oneDNN"]
    assert "MKL SGEMM" in calls and "MKL FFT" in calls and "oneDNN matmul" in calls
    # the banner lines alone prove nothing ran
    banner = "\n".join(ln for ln in text.splitlines() if ",info," in ln or "Product build" in ln)
    assert evidence.cpu_libraries_from_verbose(banner) == ([], [])
    # oneDNN 2.x / DNNL 1.x line layouts
    old = (
        "dnnl_verbose,exec,cpu,convolution,jit:avx2,forward_training,src_f32::blocked:abcd:f0,,alg:convolution_direct,"
        "mb2_ic3oc4_ih16oh14kh3sh1dh0ph0_iw16ow14kw3sw1dw0pw0,0.05"
    )
    assert evidence.cpu_libraries_from_verbose(old) == (["oneDNN"], ["oneDNN convolution"])


def test_cpu_blas_and_lapack_of_debian_torch_from_maps_not_config():
    """Debian's torch 1.13 says BLAS_INFO=generic: the library that answered is the one mapped."""
    config = (FIX / "evidence" / "torch-config-debian-1.13.txt").read_text()
    assert evidence.build_setting(config, "BLAS_INFO") == "generic"
    maps = (FIX / "evidence" / "proc-maps-debian-torch-1.13.txt").read_text()
    assert evidence.cpu_library_from_maps(maps, "blas")[0] == "reference BLAS (netlib)"
    assert evidence.cpu_library_from_maps(maps, "lapack")[0] == "reference LAPACK (netlib)"
    openblas = "7f r-xp 0 00:27 1 /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3\n"
    assert evidence.cpu_library_from_maps(openblas, "blas") == ("OpenBLAS", openblas.split()[-1])
    assert evidence.cpu_library_from_maps("7f r-xp 0 0 1 /usr/lib/libtorch_cpu.so", "blas") is None
    # NumPy's own OpenBLAS (numpy.libs/) is mapped too, but a torch matmul never calls it
    bundled = "7f r-xp 0 0 1 /usr/local/lib/python3.11/dist-packages/numpy.libs/libscipy_openblas64_-32a4.so\n"
    assert evidence.cpu_library_from_maps(bundled, "blas") is None


def test_cpu_evidence_without_verbose_prefers_the_library_the_build_names():
    import torch

    from valorch_probe import observe

    a = torch.randn(8, 8)
    config = "Build settings: BLAS_INFO=mkl, LAPACK_INFO=mkl, USE_MKL=ON, "
    _, seen = observe.on_cpu(torch, lambda: a @ a, "blas", config, verbose=False)
    assert (
        seen.libraries == ["MKL"]
        and "BLAS_INFO=mkl" in seen.source
        and "verbose mode not used" in seen.source
    )
    generic = "Build settings: BLAS_INFO=generic, LAPACK_INFO=generic, "
    _, seen = observe.on_cpu(torch, lambda: a @ a, "blas", generic, verbose=False)
    assert (
        seen.libraries != ["system BLAS (libblas)"] or "BLAS_INFO=generic" in seen.source
    )  # maps first


def test_build_config_names_blas_and_lapack():
    rocm = (FIX / "inventory" / "torch-config-rocm.txt").read_text()
    assert evidence.cpu_library_from_config(rocm, "blas") == "MKL"
    assert evidence.cpu_library_from_config(rocm, "lapack") == "MKL"
    cfg = "Build settings: BLAS_INFO=open, BUILD_TYPE=Release, LAPACK_INFO=open, USE_MKL=OFF, "
    assert evidence.cpu_library_from_config(cfg, "blas") == "OpenBLAS"
    assert evidence.cpu_library_from_config(cfg, "lapack") == "OpenBLAS"
    assert evidence.cpu_library_from_config("nothing", "blas") is None


@pytest.mark.parametrize(
    "text,kind",
    [
        (
            "CUDA error: no kernel image is available for execution on the device\nCUDA kernel errors might be "
            "asynchronously reported",
            "broken",
        ),
        (
            "HIP error: invalid device function\nHIP kernel errors might be asynchronously reported",
            "broken",
        ),
        (
            "/usr/lib/python3/dist-packages/torchvision/libtorchvision.so: undefined symbol: "
            "_ZN2at4_ops5clone4callERKNS_6TensorESt8optionalIN3c1012MemoryFormatEE",
            "broken",
        ),
        ("libcudnn.so.8: cannot open shared object file: No such file or directory", "broken"),
        (
            "Couldn't load custom C++ ops. This can happen if your PyTorch and torchvision versions are incompatible",
            "broken",
        ),
        ("\"addmm_impl_cpu_\" not implemented for 'Half'", "missing"),
        ("No available kernel. Aborting execution.", "missing"),
        ("No viable backend for scaled_dot_product_attention was found.", "missing"),
        ("Could not run 'aten::_foo' with arguments from the 'CUDA' backend.", "missing"),
        ("Torch not compiled with CUDA enabled", "missing"),
        ("CUDA error: an illegal memory access was encountered", None),
        ("expected scalar type Float but found Double", None),
    ],
)
def test_error_text_to_status(text, kind):
    assert evidence.classify_error(text) == kind


def test_not_available_and_no_kernel_alone_no_longer_mean_unsupported():
    from valorch_probe.checks._common import attempt, missing_feature

    assert not missing_feature(
        RuntimeError("CUDA error: no kernel image is available for execution on the device")
    )
    assert missing_feature(NotImplementedError("x"))
    with pytest.raises(Fail) as info:
        attempt(
            "matmul",
            lambda: (_ for _ in ()).throw(RuntimeError("HIP error: invalid device function")),
        )
    assert "installed but cannot run here" in info.value.message
    with pytest.raises(Unsupported):
        attempt(
            "op",
            lambda: (_ for _ in ()).throw(RuntimeError("\"foo\" not implemented for 'UInt16'")),
        )


def test_import_outcome_absent_versus_broken():
    absent = ModuleNotFoundError("No module named 'torchvision'", name="torchvision")
    assert isinstance(import_outcome("torchvision", absent), Unsupported)
    parent = ModuleNotFoundError("No module named 'apex'", name="apex")
    assert isinstance(import_outcome("apex.parallel", parent), Unsupported)
    dep = ModuleNotFoundError("No module named 'PIL'", name="PIL")
    out = import_outcome("torchvision", dep)
    assert (
        isinstance(out, Fail)
        and "installed but fails to import" in out.message
        and "PIL" in out.message
    )
    so = OSError(
        "/usr/lib/python3/dist-packages/torchvision/libtorchvision.so: undefined symbol: _ZN2at4_ops5clone"
    )
    out = import_outcome("torchvision", so)
    assert type(out) is Fail and "undefined symbol" in out.message
    assert (
        type(
            import_outcome("torch", ImportError("libtorch_cpu.so: cannot open shared object file"))
        )
        is Fail
    )


@pytest.mark.parametrize(
    "archs,device,want",
    [
        (["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942"], "gfx942:sramecc+:xnack-", "native"),
        (["gfx900", "gfx906", "gfx908", "gfx90a"], "gfx942", "missing"),
        (["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], "sm_90", "native"),
        (["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "compute_80"], "sm_90", "ptx"),
        (["sm_50", "sm_60", "sm_70"], "sm_90", "missing"),
        ([], "gfx1100", "missing"),
    ],
)
def test_arch_coverage(archs, device, want):
    assert evidence.arch_coverage(archs, device) == want


def test_device_labels():
    assert (
        evidence.device_label(0, "NVIDIA H100 80GB HBM3", "sm_90")
        == "cuda:0 NVIDIA H100 80GB HBM3 sm_90"
    )
    assert (
        evidence.device_label(1, "AMD Instinct MI300X", "gfx942:sramecc+:xnack-")
        == "cuda:1 AMD Instinct MI300X gfx942"
    )


def test_sdpa_backend_from_profiled_operators():
    cpu_flash = [
        "aten::scaled_dot_product_attention",
        "aten::_scaled_dot_product_flash_attention_for_cpu",
    ]
    assert evidence.sdpa_backends(cpu_flash) == ["flash"]
    assert evidence.sdpa_backends(["aten::_scaled_dot_product_attention_math", "aten::bmm"]) == [
        "math"
    ]
    assert evidence.sdpa_backends(
        ["aten::_scaled_dot_product_efficient_attention", "aten::_efficient_attention_forward"]
    ) == ["mem_efficient"]
    assert evidence.sdpa_backends(["aten::_scaled_dot_product_cudnn_attention"]) == ["cudnn"]
    assert evidence.sdpa_backends(["aten::mm"]) == []


def test_prerelease_builds_are_warned_only_when_they_match_by_prefix():
    assert matches("1.13", "1.13.0a0+gitunknown")
    w = prefix_warning("1.13", "1.13.0a0+gitunknown")
    assert w and "pre-release 1.13.0a0" in w and "git" in w and "only by prefix" in w
    assert prefix_warning("2.4", "2.4.0rc1") and prefix_warning("2.5", "2.5.0.dev20240101+rocm6.2")
    assert prefix_warning("2.13.0", "2.13.0+cpu") is None  # an official local label of a release
    assert prefix_warning("3.11", "3.11.2") is None
    assert prefix_warning("1.13", "2.0.0a0") is None  # no match at all: the check fails instead
    assert prerelease("2.4.0+git1234abc") == "local build from git (+git1234abc)"
    assert prerelease("6.2.4") is None


def test_gpu_process_list_as_torch_prints_it():
    text = "GPU:0\nprocess      12345 uses     1234.000 MB GPU memory\nprocess       777 uses       64.500 MB GPU memory"
    assert gpu_process_list(text) == [(12345, 1234.0), (777, 64.5)]
    assert gpu_process_list("pynvml module not found, please install pynvml") == []
    assert gpu_process_list("GPU:0\nno processes are running") == []


def test_no_gpu_library_name_is_a_cpu_label():
    for cpu_label in ("MKL", "oneDNN", "OpenBLAS", "cpu", "MKL + oneDNN", "Gloo", "TensorPipe"):
        assert not any(g in cpu_label for g in GPU_LIBRARIES)


def test_rocm_library_presence_from_files_headers_and_dpkg():
    """Presence-only rows read the version from the library's own header (each library
    spells its macros its own way) or the dpkg entry; a removed package is absent."""
    from valorch_probe.checks.features_rocm_libs import presence

    root = FIX / "rocm-libs"
    roots, status = (
        [str(root / "opt" / "rocm-6.3.0")],
        str(root / "var" / "lib" / "dpkg" / "status"),
    )
    rpp = presence(["librpp.so*"], [("rpp/rpp_version.h", "rpp")], ["rpp"], roots, status)
    assert rpp["version"] == "1.9.1" and rpp["libraries"][0].endswith("librpp.so.1.9.1")
    wmma = presence(
        [], [("rocwmma/rocwmma-version.hpp", "rocwmma")], ["rocwmma-dev"], roots, status
    )
    assert wmma["version"] == "1.6.0" and wmma["version_source"].endswith("rocwmma-version.hpp")
    tensor = presence(
        ["libhiptensor.so*"], [("hiptensor/hiptensor-version.hpp", "hiptensor")], [], roots, status
    )
    assert tensor["version"] == "1.4.0"  # HIPTENSOR_MAJOR_VERSION spelling
    assert presence([], [("ck/version.h", "ck")], [], roots, status)["version"] == "1.1.0"
    thrust = presence(
        [], [("thrust/rocthrust_version.hpp", "rocthrust")], ["rocthrust-dev"], roots, status
    )
    assert (
        thrust["version"] == "3.3.0.60300-39~22.04"
        and thrust["version_source"] == "dpkg rocthrust-dev"
    )
    gone = presence(
        ["libmigraphx.so*"], [("migraphx/version.h", "migraphx")], ["migraphx"], roots, status
    )
    assert gone == {"libraries": [], "version": None, "version_source": None, "packages": {}}
