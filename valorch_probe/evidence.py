"""Evidence of what ran: pure functions over text the framework or a tool printed.

- ``KERNEL_LIBRARIES``: the one table that names the library behind a GPU kernel,
  from the kernel names ``torch.profiler`` (or rocprof / nsys) records; a name no
  pattern knows is named by none, never a neighbour library. Each pattern's real
  names and their public sources: tests/fixtures/kernel-names/.
- CPU libraries: MKL / oneDNN verbose lines, or the BLAS/LAPACK a build names in
  ``torch.__config__.show()``.
- Architectures: the arch list a framework was built for against a GPU's arch.
- Error text: which exceptions say "not there" (unsupported) and which say
  "installed but broken" (fail).

Unit-tested on recorded real outputs in tests/unit/test_probe_evidence.py.
"""

from __future__ import annotations

import collections
import re
from typing import Iterable, List, Optional, Sequence, Tuple

# -- GPU kernels -> library ------------------------------------------------------
# (pattern, library, vendor) checked in order; the first match names the kernel's
# library. vendor "amd" / "nvidia" restricts a pattern to that vendor's GPUs, None
# applies to both. Patterns are searched (re.search) in the demangled kernel name.
# One pattern per entry, each under its comment: the table is read as a table.
# fmt: off
KERNEL_LIBRARIES = (
    # FlashMLA (deepseek-ai/FlashMLA), whose kernels share FlashAttention's "flash::flash_fwd_" prefix: before it.
    # "flash::flash_fwd_splitkv_mla_kernel", "flash::flash_fwd_splitkv_mla_combine_kernel",
    # "get_mla_metadata_kernel" (a vLLM profile's kernel list; FlashMLA's tests time "flash_fwd_splitkv_mla_kernel")
    (r"flash_fwd_splitkv_mla|\bflash_mla_|\bget_mla_metadata_kernel", "FlashMLA", None),
    # FlashAttention 4, flash-attn's CuTe DSL kernels for Blackwell, whose JIT names spell the Python class path:
    # "kernel_cutlass_kernel_flash_attncuteflash_fwd_sm100FlashAttentionForwardSm100_object_at__tensor..."
    # (torch.profiler tables, tests/fixtures/kernel-names/README.md); the sm90 and sm120 classes alike
    (r"flash_attncute|FlashAttention(Forward|Backward)\w{0,20}Sm\d{2,3}", "FlashAttention-4", "nvidia"),
    # FlashAttention-2 vendored into PyTorch: "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<...>>"
    (r"pytorch_flash::|\bflash_(fwd|bwd)_|flash::FlashAttn", "FlashAttention", None),
    # AITER's own kernels (its assembly FMHA and GEMMs), whose names share CK's "fmha_bwd_" prefix:
    # "aiter::fmha_bwd_hd128_bf16_causal_a32_rtna" (a torch.profiler table of TransformerEngine on ROCm,
    # tests/fixtures/kernel-names/README.md): before CK, which would otherwise claim them
    (r"^(void )?aiter::", "AITER", "amd"),
    # Composable Kernel tile programs (CK flash attention, CK GEMMs): "void ck_tile::kentry<256, 2,
    # ck_tile::FmhaFwdKernel<...", "void ck_tile::kentry<64, 2, ck_tile::FmhaBwdOGradDot..." (torch.profiler tables,
    # tests/fixtures/kernel-names/README.md), "void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemmMultiD_ABScale_
    # xdl_cshuffle_v3<...", "void ck::kernel_moe_gemm<ck::GridwiseMoeGemmBlockScale<..." (MI300 vLLM traces, same
    # README), "device_gemm_xdl..."; and their mangled symbols, as rocprof and some traces print them:
    # "_ZN2ck27kernel_gemm_xdl_cshuffle_v3INS_42GridwiseGemmMultiD_ABScale_xdl_cshuffle_v3..." (same README),
    # "_ZN7ck_tile6kentry..." (the Itanium mangling of namespace "ck" / "ck_tile")
    (r"\bck_tile::|\bck::|^_ZN(2ck|7ck_tile)\d|device_gemm_xdl|\bfmha_(fwd|bwd)_", "Composable Kernel", "amd"),
    # AOTriton's precompiled Triton attention kernels used by ROCm SDPA, named after the Triton functions of
    # ROCm/aotriton tritonsrc/: "attn_fwd", "bwd_kernel_dk_dv", "bwd_kernel_dq", "bwd_preprocess", and the
    # suffixed variants of later releases ("bwd_kernel_dk_dv_reduce", "bwd_kernel_fuse"): anchored at the start
    # only (a "\b" after the name missed every suffixed one). flash-attn's AMD Triton backend JIT-compiles Triton
    # functions of the same names (flash_attn/flash_attn_triton_amd, "attn_fwd"): SHARED_NAMES tells them apart
    (r"^(void )?(attn_fwd|bwd_kernel_dk_dv|bwd_kernel_dq|bwd_kernel_fuse|bwd_preprocess)", "AOTriton", "amd"),
    # Memory-efficient attention (xFormers CUTLASS kernels in PyTorch): "fmha_cutlassF_f16_aligned_64x64_rf_sm80"
    (r"fmha_cutlass[FB]_", "mem-efficient attention (CUTLASS)", None),
    # cuDNN's attention and convolution engines: "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_...",
    # "cudnn::engines_precompiled::...", "sm90_xmma_fprop_implicit_gemm_...", "implicit_convolve_sgemm"
    # "volta_scudnn_128x64_relu_small_nn_v1", "cudnn::detail::wgrad_alg0_engine<...>" (pytorch/pytorch#13412),
    # "volta_s884cudnn_fp16_256x64_ldg8_relu_exp_small_nhwc_tn_v1" (apache/mxnet#14684),
    # "implicit_convolveNd_hhgemm" (NVIDIA/cudnn-frontend#22), "cudnn::detail::bn_fw_tr_1CHW_kernel_new<...>"
    # (pytorch/pytorch#38915), "conv2d_grouped_direct_kernel<...>" / "wgrad2d_grouped_direct_kernel<...>"
    # (pytorch/pytorch#34977), "cudnn::ops::genericTranspose_kernel<...>" (pytorch/pytorch#54324)
    (r"cudnn|xmma_(fprop|dgrad|wgrad)|implicit_convolve|precomputed_convolve|explicit_convolve|"
     r"winograd(4x4|_)|\b(conv|wgrad|dgrad)2d_grouped_direct", "cuDNN", "nvidia"),
    # cuDNN's RNN kernels, which carry no "cudnn" in their demangled names (an LSTM was attributed to the
    # cuBLAS GEMMs beside them): "void elemWiseRNNcell<float, float, float, (cudnnRNNMode_t)0, ...>",
    # "LSTM_elementWise_fp<float, float, float, ...>", "void RNN_elementWise_bp1<float, float, float>",
    # "RNN_blockPersist_fp_LSTM_HMMA" (public nsys / nvprof kernel summaries, tests/fixtures/tools/README.md)
    (r"\belemWiseRNNcell|\b(LSTM|GRU|RNN)_elementWise_(fp|bp)|\bRNN_blockPersist_", "cuDNN", "nvidia"),
    # hipBLASLt's TensileLite GEMMs, generated and hand-tuned ("Custom_" assembly kernels): only TensileLite
    # names carry the "_UserArgs_" field (its user-arguments grouped-GEMM ABI). Generated:
    # "Cijk_Ailk_Bjlk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1_CMS_SN_..." (ROCm/rocm-libraries#3230);
    # hand-tuned: "Custom_Cijk_Alik_Bljk_BBS_BH_Bias_AS_SAV_UserArgs_MT256x256x64_MI16x16x1_SN_K1_MIWT4_16_DTVA"
    # (ROCm/hipBLASLt#869, #932, #1002, #1199)
    (r"^(void )?(Custom_)?Cijk_\w*_UserArgs_", "hipBLASLt", "amd"),
    # Tensile-generated GEMMs of rocBLAS and hipBLASLt without that field: "Cijk_Ailk_Bljk_SB_MT128x64x8_SN_...".
    # Both libraries emit these names, so a kernel name alone never tells which one served the call: the
    # libraries' own logs do (blas_log.py: ROCBLAS_LAYER, HIPBLASLT_LOG_MASK)
    (r"^(void )?(Custom_)?Cijk_", "rocBLAS/hipBLASLt (Tensile)", "amd"),
    # rocBLAS's own (non-Tensile) kernels: "void rocblas_gemvt_kernel" (a rocprof kernel table,
    # ROCm/rocm-libraries#684's "rocblas_gemvt_row_vectorized_kernel<CONJ, TILE_DIM_X, TILE_DIM_Y>")
    (r"\brocblas_|rocblas::", "rocBLAS", "amd"),
    # hipBLASLt's own kernels (not Tensile-named): "hipblaslt..." helpers and epilogues
    (r"hipblaslt", "hipBLASLt", "amd"),
    # MIOpen: "MIOpenBatchNormFwdTrainSpatial", "miopenSp3AsmConv_v30_3_1_gfx11_fp32_f2x3_stride1",
    # "naive_conv_fwd_nchw_fp32", "igemm_fwd_gtcx_nchw_fp32...", "MIOpenConvUni", "gridwise_convolution_...";
    # the naive fallbacks of later releases carry a packing field: "naive_conv_nonpacked_fwd_nchw_half_double_half",
    # "naive_conv_nonpacked_bwd_nchw_half_double_half" (ROCm/MIOpen#3310, a torch.profiler capture on MI250X);
    # the alpha-beta naive kernels of 3.x, "naive_conv_ab_nonpacked_fwd_nchw_half_double_half",
    # "naive_conv_ab_nonpacked_fwd_ncdhw_float_double_float", "naive_conv_ab_nonpacked_fwd_nchw_int8_t_int32_t_int8_t"
    # (ROCm/rocm-libraries projects/miopen ConvDirectNaiveConv*: "naive_conv_ab_" + packed/nonpacked + direction);
    # the layout transposes around its NHWC kernels, "batched_transpose_32x32_dword", "batched_transpose_32x16_dword"
    # (ROCm/MIOpen src/kernels/gpu_batched_transpose_kernel/batched_transpose.cpp; seen in ROCm ConvTranspose3d profiles)
    (r"^(void )?(MIOpen|miopen|batched_transpose_\d+x\d+_(dword|half|byte)\b)|"
     r"naive_conv_(ab_)?((non)?packed_)?(fwd|bwd|wrw)|igemm_(fwd|bwd|wrw)_gtc|gridwise_convolution|"
     r"ConvHipImplicitGemm|\bLSTMFwdHidUpdate|\bOpTensorFwdBias", "MIOpen", "amd"),
    # rocFFT run-time compiled kernels: "fft_rtc_fwd_len64_factors_8_8_wgs_64_tpt_8_sp_ip_CI_unitstride_sbrr"
    (r"\bfft_rtc_|rocfft|^(void )?fft_(fwd|back)_", "rocFFT", "amd"),
    # cuFFT: "void regular_fft<192u, EPT<12u, 16u>, ...>", "vector_fft<...>", "composite_2way_fft"
    (r"\b(regular|vector|composite_2way|bluestein|radix\d?)_fft\b|\bfft\d*_(r2c|c2r|c2c)|cufft", "cuFFT", "nvidia"),
    # rocPRIM (under hipCUB and rocThrust): "void rocprim::detail::radix_sort_onesweep_kernel<...>"
    (r"rocprim::", "rocPRIM/hipCUB", "amd"),
    # hipCUB's own namespace when it is not backed by rocPRIM names
    (r"hipcub::", "hipCUB", "amd"),
    # CUB (PyTorch wraps it as at_cuda_detail::cub): "void at_cuda_detail::cub::DeviceRadixSortOnesweepKernel<...>"
    (r"\bcub::|DeviceRadixSort|DeviceScan|DeviceReduce|DeviceSegmented", "CUB", "nvidia"),
    # Thrust / rocThrust parallel algorithms: "void thrust::cuda_cub::core::_kernel_agent<...>"
    (r"\bthrust::", "rocThrust", "amd"),
    (r"\bthrust::", "Thrust", "nvidia"),
    # rocRAND / cuRAND generators' host-API kernels. torch.randn is not these: ATen's own Philox kernels
    # ("at::native::...distribution_elementwise_grid_stride_kernel<...normal...>") use the header-only
    # curand_kernel.h / hiprand device functions and are named ATen below, although their template arguments
    # spell "curandStatePhilox4_32_10" (hiprand's / rocrand's state on ROCm): a name in ATen's namespace is never
    # the RNG library's
    (r"^(?!(void )?at::)(?=.*(rocrand|hiprand))", "rocRAND", "amd"),
    (r"^(?!(void )?at::)(?=.*curand)", "cuRAND", "nvidia"),
    # rocSOLVER / cuSOLVER / MAGMA: "void rocsolver::getf2_..." "rocsolver_getrf", "cusolver...", "magma_sgetrf..."
    (r"rocsolver", "rocSOLVER", "amd"),
    (r"cusolver|\b(getrf|getrs|potrf|geqrf|gesvd|gesvdj|syevd|ormqr|laswp)_?\w*_kernel", "cuSOLVER", "nvidia"),
    (r"magma", "MAGMA", None),
    # rocSPARSE / cuSPARSE: "void rocsparse::csrmmnn_general_kernel<...>", "void cusparse::csrmm_kernel<...>"
    (r"rocsparse", "rocSPARSE", "amd"),
    (r"cusparse", "cuSPARSE", "nvidia"),
    # hipSPARSELt / cuSPARSELt structured-sparsity GEMMs
    (r"hipsparselt|spmm_.*sparse", "hipSPARSELt", "amd"),
    (r"cusparselt|sm\d+_xmma_sparse_gemm", "cuSPARSELt", "nvidia"),
    # cuBLAS/cuBLASLt GEMMs: "ampere_sgemm_128x64_nn", "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize...",
    # "nvjet_sm90_hss_320x128_64x3_1x2_h_bz_coopB_NNT", "gemv2T_kernel_val<...>", "gemmSN_NN_kernel",
    # "splitKreduce_kernel", and cuBLAS's CUTLASS-named kernels "cutlass_80_tensorop_s1688gemm_...".
    # SIMT: "volta_sgemm_64x32_sliced1x4_nn", "splitKreduce_kernel<float, float, float>(cublasSplitKParams<float>, ..."
    # (pytorch/pytorch#51382), "gemm_kernel2x2_core<double, ...>" (cublasDgemm on V100, kokkos/kokkos-kernels#1052),
    # "cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nn_align1>" (cuBLASLt, NVIDIA/CUDALibrarySamples#309);
    # tensor-op: "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_..._cublas" (NVIDIA/TensorRT-LLM#1541).
    # cuBLAS runs cuBLASLt's kernels, so the names cannot tell the two apart. CUTLASS's own library names carry
    # no arch number ("cutlass_tensorop_s1688gemm_...", NVIDIA/cutlass#206), and "cutlass3x_sm100_..." names are
    # shared by cuBLASLt and CUTLASS's generator, so neither is matched here (unattributed, not a guess)
    (r"^(void )?(maxwell|pascal|volta|turing|ampere|hopper|blackwell|sm\d+)_\w*(gemm|gemv)|xmma_gemm|"
     r"\bnvjet_|gemv2[NT]_kernel|\bgemvx?_kernel|gemmSN_|gemmk1_kernel|splitKreduce_kernel|\bgemm_kernel\d+x\d+_core|"
     r"cutlass_\d+_(wmma_)?(tensorop|simt)|cublas", "cuBLAS/cuBLASLt", "nvidia"),
    # NCCL / RCCL collectives keep NCCL's kernel names on both vendors:
    # "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "ncclKernel_AllReduce_RING_LL_Sum_float"
    (r"\bnccl(Dev)?Kernel|ncclDevFunc", "RCCL", "amd"),
    (r"\bnccl(Dev)?Kernel|ncclDevFunc", "NCCL", "nvidia"),
    # JPEG decoders: "nvjpeg..." kernels; rocJPEG's "rocjpeg..." kernels
    (r"nvjpeg", "nvJPEG", "nvidia"),
    (r"rocjpeg", "rocJPEG", "amd"),
    # CUTLASS kernels not named by cuBLAS: "void cutlass::Kernel<...>", "cutlass::device_kernel<...>"
    (r"\bcutlass::", "CUTLASS", None),
    # Triton-generated kernels (torch.compile/inductor): "triton_poi_fused_add_0", "triton_red_fused_..."
    (r"^(void )?triton_", "Triton", None),
    # PyTorch's own ATen kernels: "void at::native::vectorized_elementwise_kernel<4, ...>"
    (r"\bat::native::|\bat::cuda::|\bc10::", "PyTorch (ATen native)", None),
)
NATIVE = "PyTorch (ATen native)"
# fmt: on
_COMPILED = [(re.compile(p), lib, vendor) for p, lib, vendor in KERNEL_LIBRARIES]


#: names two libraries share, told apart by a Python module of the process that ran them: flash-attn's AMD
#: Triton backend (FLASH_ATTENTION_TRITON_AMD_ENABLE) JIT-compiles Triton functions named as AOTriton's
#: precompiled ones ("attn_fwd": Dao-AILab/flash-attention flash_attn/flash_attn_triton_amd/fwd_prefill.py,
#: ROCm/aotriton tritonsrc/): with that backend imported they are Triton's
SHARED_NAMES = {"AOTriton": ("flash_attn.flash_attn_triton_amd", "Triton")}


def library_of_kernel(name: str, vendor: Optional[str] = None) -> Optional[str]:
    """The library behind one kernel name, or None when no pattern knows it."""
    for rx, lib, who in _COMPILED:
        if who is not None and vendor is not None and who != vendor:
            continue
        if rx.search(name):
            return lib
    return None


def libraries_of(
    names: Iterable[str], vendor: Optional[str] = None, modules: Iterable[str] = ()
) -> List[str]:
    """The libraries behind kernel names, most frequent first; PyTorch's own kernels are
    named only when no library kernel ran. ``modules``: the Python modules imported where
    the kernels ran (``SHARED_NAMES``)."""
    shared = {lib: to for lib, (mod, to) in SHARED_NAMES.items() if mod in set(modules)}
    found = (library_of_kernel(name, vendor) for name in names)
    counts = collections.Counter(shared.get(lib, lib) for lib in found if lib is not None)
    libs = sorted(counts, key=lambda k: (-counts[k], k))
    real = [lib for lib in libs if lib != NATIVE]
    return real or libs


def label(libs: Sequence[str]) -> Optional[str]:
    return " + ".join(libs) if libs else None


# -- CPU libraries -------------------------------------------------------------------
_MKL_CALL = re.compile(r"^MKL_VERBOSE\s+(?!(?:Intel|oneMKL|MKL\b))([A-Za-z_][A-Za-z0-9_]*)\(", re.M)
_DNN_EXEC = re.compile(
    r"^(?:onednn|dnnl|mkldnn)_verbose,(?:[^,\n]*,)*?exec,cpu[^,\n]*,([a-z_]+),", re.M
)


def cpu_libraries_from_verbose(text: str) -> Tuple[List[str], List[str]]:
    """(libraries, calls) proven by MKL_VERBOSE / ONEDNN_VERBOSE lines."""
    libs, calls = [], []  # type: List[str], List[str]
    for lib, rx in (("MKL", _MKL_CALL), ("oneDNN", _DNN_EXEC)):
        found = rx.findall(text or "")
        if found:
            libs.append(lib)
            calls += ["%s %s" % (lib, c) for c in sorted(set(found))]
    return libs, calls


_BLAS_NAMES = {
    "mkl": "MKL",
    "open": "OpenBLAS",
    "openblas": "OpenBLAS",
    "blis": "BLIS",
    "atlas": "ATLAS",
    "accelerate": "Accelerate",
    "eigen": "Eigen",
    "flexi": "FlexiBLAS",
    "flexiblas": "FlexiBLAS",
    "generic": "system BLAS (libblas)",
    "nvpl": "NVPL",
    "armpl": "Arm PL",
    "ssl2": "SSL2",
}


def build_setting(config: str, key: str) -> Optional[str]:
    """One KEY=value of ``torch.__config__.show()``'s build settings."""
    m = re.search(r"\b%s=([^,\s]*)" % re.escape(key), config or "")
    return m.group(1) if m and m.group(1) else None


def cpu_library_from_config(config: str, family: str) -> Optional[str]:
    """The BLAS or LAPACK a torch build links, from ``torch.__config__.show()``
    (family "blas" reads BLAS_INFO, "lapack" LAPACK_INFO)."""
    value = build_setting(config, {"blas": "BLAS_INFO", "lapack": "LAPACK_INFO"}.get(family, ""))
    if not value:
        return None
    return _BLAS_NAMES.get(value.lower(), value)


# (path pattern, library) of the shared objects a process maps, per family: which BLAS /
# LAPACK answered is the one loaded (Debian's "generic" build settings name none).
_MAPPED = {
    "blas": (
        (r"openblas", "OpenBLAS"),
        (r"libmkl_", "MKL"),
        (r"blis", "BLIS"),
        (r"atlas", "ATLAS"),
        (r"flexiblas", "FlexiBLAS"),
        (r"/libblas\.so", "reference BLAS (netlib)"),
    ),
    # the tracing library torch.profiler's device activity comes from (Kineto's backends):
    # CUPTI on CUDA builds, roctracer or rocprofiler-sdk on ROCm builds
    "tracing": (
        (r"/libcupti\.so", "CUPTI"),
        (r"/librocprofiler-sdk\.so", "rocprofiler-sdk"),
        (r"/libroctracer64\.so", "roctracer"),
    ),
    "lapack": (
        (r"openblas", "OpenBLAS"),
        (r"libmkl_", "MKL"),
        (r"flexiblas", "FlexiBLAS"),
        (r"atlas", "ATLAS"),
        (r"/liblapack\.so", "reference LAPACK (netlib)"),
    ),
}


def cpu_library_from_maps(maps: str, family: str) -> Optional[Tuple[str, str]]:
    """(library, path) of the BLAS / LAPACK mapped into this process (/proc/self/maps).
    The copies NumPy and SciPy wheels bundle for themselves (``numpy.libs/``, ``scipy.libs/``)
    are not torch's: a torch matmul never calls them."""
    paths = sorted(
        {
            ln.split()[-1]
            for ln in (maps or "").splitlines()
            if "/" in ln and ".so" in ln and not re.search(r"/(numpy|scipy)[^/]*\.libs/", ln)
        }
    )
    for pattern, lib in _MAPPED.get(family, ()):
        rx = re.compile(pattern, re.I)
        for path in paths:
            if rx.search("/" + "/".join(path.split("/")[-2:])):  # directory and file name only
                return lib, path
    return None


def tracing_library(maps: str, vendor: Optional[str], config: str = "") -> Tuple[str, str]:
    """(library, evidence) of the tracing library behind torch.profiler's device activity:
    the one mapped into the process, else what the build's Kineto flags leave
    (-DLIBKINETO_NOCUPTI / -DLIBKINETO_NOROCTRACER in torch.__config__.show()), else the
    vendor's default."""
    found = cpu_library_from_maps(maps, "tracing")
    if found:
        return found[0], "mapped: %s" % found[1]
    if vendor == "nvidia" and "LIBKINETO_NOCUPTI" not in (config or ""):
        return "CUPTI", "the CUDA build's Kineto (no -DLIBKINETO_NOCUPTI)"
    if vendor == "amd" and "LIBKINETO_NOROCTRACER" not in (config or ""):
        return "roctracer", "the ROCm build's Kineto (no -DLIBKINETO_NOROCTRACER)"
    return "CUPTI/roctracer", "no tracing library seen"


# -- architectures --------------------------------------------------------------------


def base_arch(arch: str) -> str:
    """'gfx942:sramecc+:xnack-' -> 'gfx942'; 'sm_90a' stays."""
    return (arch or "").split(":")[0].strip()


def arch_coverage(arch_list: Sequence[str], device_arch: str) -> str:
    """How a build's arch list covers a GPU: 'native' (code for this arch),
    'ptx' (CUDA PTX of an older compute capability the driver can JIT),
    or 'missing' ("no kernel image is available" / "invalid device function")."""
    dev = base_arch(device_arch)
    built = [base_arch(a) for a in arch_list]
    if dev in built:
        return "native"
    m = re.match(r"sm_(\d+)", dev)
    if m:
        cc = int(m.group(1))
        for a in built:
            pm = re.match(r"compute_(\d+)$", a)
            if pm and int(pm.group(1)) <= cc:
                return "ptx"
    return "missing"


def device_label(index: int, name: str, arch: str) -> str:
    """'cuda:0 NVIDIA H100 80GB HBM3 sm_90', 'cuda:0 AMD Instinct MI300X gfx942'."""
    return " ".join(p for p in ("cuda:%d" % index, (name or "").strip(), base_arch(arch)) if p)


# -- error text -> status -------------------------------------------------------------
# An installed component that cannot run here: never "unsupported", always a failure
# with the evidence (the packaging bugs this tool exists to catch).
BROKEN = re.compile(
    r"no kernel image is available|invalid device function|hipErrorNoBinaryForGpu|no binary for gpu|"
    r"hipErrorInvalidDeviceFunction|undefined symbol|cannot open shared object file|"
    r"wrong ELF class|version `[^']+' not found|Couldn't load custom C\+\+ ops|"
    r"CUDA driver version is insufficient|named symbol not found|"
    r"device kernel image is invalid|HSA_STATUS_ERROR",
    re.I,
)
# A framework saying "this op/dtype/backend is not there in this version or backend".
MISSING = re.compile(
    r"not implemented|notimplemented|not supported|unsupported|not compiled|was not built|"
    r"not built with|no available kernel|could not run '|not linked|is not enabled|compiled without|"
    r"doesn't support|does not support|have no implementation|has no implementation|"
    r"not currently supported|no such operator|no viable backend",
    re.I,
)


def classify_error(text: str) -> Optional[str]:
    """'broken' (installed, cannot run here: fail), 'missing' (absent in this
    version or backend: unsupported) or None (just wrong: fail)."""
    if BROKEN.search(text or ""):
        return "broken"
    if MISSING.search(text or ""):
        return "missing"
    return None


# -- SDPA: which implementation ran, from the aten operators torch.profiler records ---
SDPA_BACKENDS = (
    ("_scaled_dot_product_flash_attention", "flash"),
    ("_scaled_dot_product_efficient_attention", "mem_efficient"),
    ("_scaled_dot_product_cudnn_attention", "cudnn"),
    ("_scaled_dot_product_attention_math", "math"),
    ("_efficient_attention_forward", "mem_efficient"),
    ("_flash_attention_forward", "flash"),
)


def sdpa_backends(op_names: Iterable[str]) -> List[str]:
    """SDPA implementations seen among profiled operator names
    (aten::_scaled_dot_product_flash_attention_for_cpu counts as flash)."""
    seen = []  # type: List[str]
    for name in op_names:
        for needle, backend in SDPA_BACKENDS:
            if needle in name and backend not in seen:
                seen.append(backend)
                break
    return seen
