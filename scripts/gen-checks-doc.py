#!/usr/bin/env python3
"""Write docs/checks.md from the probe's registry: one table per suite with the
check id, the feature (matrix row) it evidences, its kind, the backend library
it exercises and what it proves (the first paragraph of its docstring).

    python3 scripts/gen-checks-doc.py [--out docs/checks.md] [--check]

--check exits 1 when the file on disk differs from what would be written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from valorch_probe.loader import catalog


def _cell(text) -> str:
    if text is None or text == "":
        return "—"
    return str(text).replace("|", "\\|").replace("\n", " ")


GPU_STATUS = (
    "**Which paths have run on real GPUs: none yet.** Every check below ran on this project's CPU-only machines "
    "(the host interpreter and the local test images): there, GPU-only rows are `skip`. No GPU path (a check body "
    "past `require_gpu`, library evidence from GPU kernel names, the profiler and SMI tools, NCCL/RCCL ranks, the "
    "ROCm library rows) has run on an AMD or NVIDIA GPU. What is tested instead: the classification those paths "
    "rely on, on real public captures where one was found (`tests/fixtures/tools/real/README.md` cites each) and "
    "on synthetic formats otherwise (table below); and the probe itself against a torch stand-in whose device "
    "properties behave as PyTorch's bindings do on CUDA and ROCm builds (`tests/fixtures/fake_torch`, "
    "`tests/acceptance/test_gpu_arch_semantics.py`). When a GPU is available: run `valorch run --image host` with "
    "every suite and `valorch hosts probe --record DIR`, turn the record into fixtures "
    "(`scripts/record-to-fixtures.py DIR LABEL`), fix what they reveal, and record here the date, the GPU and the "
    "checks that passed (in `scripts/gen-checks-doc.py`)."
)

#: (row, the calls, the public header that declares them): docs/checks.md's "Host entry points"
HOST_ENTRY_POINTS = (
    (
        "features.rocm.hiptensor",
        "`hiptensorGetVersion()` (size_t, major * 10000 + minor * 100 + patch), "
        "`hiptensorGetErrorString(HIPTENSOR_STATUS_SUCCESS = 0)`",
        'ROCm/hipTensor library/include/hiptensor/hiptensor.h (extern "C", hipTensor 2.x; commit 07863428); '
        'hipTensor 1.x declares them in hiptensor.hpp without C linkage: "present, not exercised"',
    ),
    (
        "features.rocm.rocdecode",
        '`rocDecGetErrorName(ROCDEC_NOT_SUPPORTED = -8)` -> "ROCDEC_NOT_SUPPORTED"',
        'ROCm/rocDecode api/rocdecode.h (extern "C"; rocDecStatus enum; implementation '
        "src/rocdecode/rocdecode_api.cpp; commit 8636edce). Its decoder entry points take a GPU",
    ),
    (
        "features.rocm.rpp",
        "a host handle for a batch of 3, `rppGetBatchSize` reads 3 back, destroyed: RPP 2.x "
        "`rppCreate(&h, 3, 1, NULL, RPP_HOST_BACKEND = 0)` / `rppDestroy(h, 0)`; RPP 1.x "
        "`rppCreateWithBatchSize(&h, 3, 1)` / `rppDestroyHost(h)`",
        "ROCm/rpp api/rpp.h and api/rppdefs.h (commit f1d37473, RPP 2.0); include/rpp.h before ROCm/rpp#513 "
        "(RPP 1.9); rppStatusSuccess = 0",
    ),
    (
        "features.rocm.mivisionx",
        "`vxCreateContext()`, `vxGetStatus`, `vxQueryContext` (VX_CONTEXT_VENDOR_ID = "
        "0x80100, VX_CONTEXT_UNIQUE_KERNELS = 0x80102), `vxReleaseContext`",
        "ROCm/MIVisionX amd_openvx/openvx/include/VX/vx_api.h, vx_types.h, vx_vendors.h (VX_ID_AMD = 0x00D; "
        "commit 21219472)",
    ),
    (
        "features.rocm.rocal",
        "`rocalCreate(2, ROCAL_PROCESS_CPU = 1, 0, 1, 3, ROCAL_FP32 = 0)`, `rocalGetStatus` "
        "(ROCAL_OK = 0), `rocalRelease`",
        "ROCm/rocAL rocAL/include/api/rocal_api.h, rocal_api_info.h, rocal_api_types.h (commit 0981d5bb)",
    ),
    (
        "features.rocm.rocthrust, features.rocm.rocwmma",
        "none: header-only (templates compiled into the caller's kernels)",
        '"present, not exercised"',
    ),
)

#: (checks, what is tested on a real public capture, what has none): docs/checks.md's evidence table
REAL_EVIDENCE = (
    (
        "env.build.backend, env.facts, smoke.device (the GPU arch, coverage, the device label)",
        "torch.cuda.get_device_properties of an MI300X (pytorch/ao#2853); CUDA's gcnArchName = name "
        "(pytorch/pytorch torch/csrc/cuda/Module.cpp)",
        "an H100's full property repr",
    ),
    (
        "profiler.smi.nvidia_smi",
        "nvidia-smi --query-gpu CSV of 8x H100 (NVIDIA/cutlass examples/"
        "65_distributed_gemm/REQUIREMENTS.md) and of a TITAN V + RTX 5880 with the fields in another order "
        "(triton-inference-server/server#8070)",
        "—",
    ),
    (
        "profiler.smi.rocm_smi",
        "rocm-smi --showproductname --json of an MI250X, gfx90a spelt gfx9010 "
        "(ROCm/rocm_smi_lib#159)",
        "an MI300X capture",
    ),
    (
        "profiler.smi.amd_smi",
        "amd-smi static --json of an RX 7800 XT (gfx1101) with amdsmi's Python warnings "
        "before the document and the gpu_data wrapper (nathaninline/ajean#39)",
        "an Instinct GPU's JSON (MI300X / MI250 only in the synthetic amd-smi-static-asic-*.json)",
    ),
    (
        "profiler.tool.ncu",
        "the ERR_NVGPUCTRPERM message (NVIDIA/TensorRT-LLM#183) -> skip with the host's fix",
        "no real `ncu --csv` of a profiled run: the CSV parser is tested on the synthetic ncu-csv.txt",
    ),
    (
        "profiler.tool.nsys, profiler.tool.rocprofv3, profiler.tool.rocprof",
        "—",
        "no real capture found: parsers tested on the synthetic files of tests/fixtures/tools/",
    ),
    (
        "kernels.* and features.* library evidence (evidence.KERNEL_LIBRARIES)",
        "real kernel names of public captures, each with its source (tests/fixtures/kernel-names/: cuDNN, "
        "cuBLAS SIMT and tensor-op, cuBLASLt, hipBLASLt generated and hand-tuned, rocBLAS, MIOpen naive "
        "fallbacks, Composable Kernel tile programs and GEMMs, AITER, and names left unattributed), kernel "
        "names of "
        "published profiles (tests/fixtures/evidence/kernel-names.tsv), the rows of a real torch.profiler "
        "table on CUDA (vllm-project/vllm-omni#553); cuDNN RNN names from public nsys / nvprof summaries",
        "the cuDNN RNN and AOTriton-suffix names have no citable capture file (their sources are named "
        "in tests/fixtures/tools/real/README.md); the Composable Kernel and AITER names come from public "
        "torch.profiler tables whose repository the search index did not name, and the Composable Kernel "
        "GEMMs (ck::kernel_gemm_xdl_cshuffle_v3, ck::kernel_moe_gemm) from MI300 vLLM traces quoted in "
        "public repository files the index did not name either",
    ),
    (
        "kernels.linear.bf16 (rocBLAS vs hipBLASLt)",
        "the bench-log lines of the rocBLAS and hipBLASLt documentation",
        "a log captured from torch on a ROCm GPU",
    ),
    (
        "kernels.matmul.*, kernels.linear.bf16 on CUDA (cuBLAS vs cuBLASLt); kernels.conv2d/conv3d on ROCm "
        "(MIOpen vs the CK / Tensile kernels it runs): the libraries' own logs decide over kernel names",
        "real log lines (tests/fixtures/vendor-logs/): MIOpen's MIOPEN_ENABLE_LOGGING_CMD driver commands "
        "(ROCm/rocm-libraries#6439, ROCm/MIOpen#2028), cuBLASLt's CUBLASLT_LOG_LEVEL trace lines (cublasLtMatmul "
        "from XLA; cublasLtSSSMatmul from a torch.matmul), cuBLAS's CUBLAS_LOGINFO_DBG lines (JuliaGPU/CUDA.jl#417, "
        "#609), NVIDIA/CUDALibrarySamples#185, #187",
        "the two cuBLASLt trace captures' repositories were not named by the search index; that cuBLAS's GEMM "
        "API shows as a typed cublasLt<types>Matmul entry rests on one capture; no log captured from torch "
        "on a GPU by this project",
    ),
    (
        "env.build.backend, env.facts, env.version.*, inventory audit (compiled-against and loaded "
        "library versions), smoke.matmul.fp32's CPU BLAS",
        "the CUDA test image valorch/test:pip-torch-cuda (torch 2.6.0+cu124 from the package index): "
        "torch.__config__.show(), torch._C._show_config(), cudnn.version() 90100, nccl.version() (2, 21, 5), "
        "the objects mapped after import torch, each library's own version call and the wheels' metadata "
        "(tests/fixtures/cuda-wheel/)",
        "the same on a GPU host (CUDA Runtime / CuDNN lines of _show_config, get_arch_list)",
    ),
    (
        "features.distributed.gloo, features.distributed.tensorpipe, kernels.all_reduce.gloo",
        "the CUDA test image: init_rpc dying on 'Numpy is not available' (all_gather_object's "
        "tensor.numpy()), gloo's rank 0 never returning from its teardown",
        "—",
    ),
    (
        "features.cuda.jiterator, features.cuda.lazy_nvrtc",
        "libnvrtc.so.12 mapped right after import torch in the CUDA test image (pytorch/pytorch#145582); "
        "the ROCm launch's 'Jiterator is not supported on ROCm' is PyTorch's source "
        "(aten/src/ATen/cuda/jiterator.h), modelled by tests/fixtures/fake_torch",
        "a ROCm GPU's jiterator launch",
    ),
    (
        "features.cuda.dynamic_parallelism (CUDA), features.backends.matmul_allow_tf32 (ROCm)",
        "—",
        "no GPU capture: the device-link recipe is the CUDA docs' and pytorch/pytorch#57543's, the "
        "HIPBLASLT_ALLOW_TF32 gate is aten/src/ATen/Context.cpp, both modelled by tests/fixtures/fake_torch",
    ),
    (
        "features.cuda.dynamic_parallelism (HIP)",
        "—",
        "no hipcc capture of a rejected device-side launch: the "
        "pattern follows clang's err_ref_bad_target text, and on HIP any build failure is unsupported",
    ),
    (
        "hosts probe / host detection (KFD topology, nvidia-smi noheader CSV)",
        "the gfx_target_version line of an "
        "MI300X's KFD node properties (ROCm/rocm-cli#343) -> gfx942",
        "no cited complete KFD `properties` file or `--format=csv,noheader,nounits` capture: synthetic "
        "tests/fixtures/kfd*, tests/fixtures/nvidia-smi.csv",
    ),
    (
        "hosts probe --record scrubbing",
        "rocm-smi JSON with a Unique ID (jurkovic-nikola/OpenLinkHub#27), "
        "amd-smi list with UUID and serial (ROCm/rocm-systems#3654), nvidia-smi -L (server#8070), an MI300X "
        "property repr with uuid (pytorch/ao#2853), nvidia-smi -q -x of an A100 (netdata/netdata testdata)",
        "—",
    ),
    (
        'smoke.device and every "needs a GPU" skip of a CUDA build (valorch_probe/nvidia_driver.py)',
        "nvidia-smi -q -x of an A100-SXM4-40GB with MIG on, driver 510.47.03 / CUDA 11.6 (netdata/netdata "
        "src/go/plugin/go.d/collector/nvidia_smi/testdata/a100-sxm4-mig.xml): a cu121 torch that sees no GPU "
        "there is told the driver is older than its CUDA 12.1",
        "—",
    ),
)


def render() -> str:
    cat = catalog()
    checks = {c["id"]: c for c in cat["checks"]}
    lines = (
        [
            "# Checks",
            "",
            "Generated by `scripts/gen-checks-doc.py` from the probe's registry "
            "(`valorch_probe/checks/`); do not edit by hand.",
            "",
            "Every check has a stable id, the feature (matrix row) it evidences, its kind and, where one applies, "
            "the backend library the row is about (*ROCm library/CUDA library*). That declared library labels the row; "
            "a **result** names only the library that evidence shows ran: on a GPU the libraries behind the kernel "
            "names `torch.profiler` recorded (`valorch_probe/evidence.py`, one table with a comment per "
            "pattern; a name no pattern knows is `unattributed`), and where those names cannot tell libraries apart, "
            "the library's own log, which wins over the names: rocBLAS vs hipBLASLt from their bench logs "
            "(`valorch_probe/blas_log.py`: `ROCBLAS_LAYER`, `HIPBLASLT_LOG_MASK`), MIOpen vs the Composable Kernel / "
            "Tensile kernels it runs from MIOpen's driver commands (`MIOPEN_ENABLE_LOGGING_CMD=1`), cuBLASLt vs "
            "cuBLAS from cuBLASLt's trace (`CUBLASLT_LOG_LEVEL=2`: `cublasLtMatmul` is cuBLASLt's own API, a typed "
            "`cublasLtSSSMatmul`-style entry is cuBLAS's GEMM API) and cuBLAS's log (`CUBLAS_LOGINFO_DBG`) "
            "(`valorch_probe/vendor_log.py`); the operation runs again in a child with the logs on, and the result's "
            "`library_evidence` names the log that decided (and, for MIOpen and cuBLAS, what the kernel names alone "
            "said). On "
            "the CPU the library MKL's / oneDNN's verbose mode showed, or the BLAS / LAPACK that "
            "`torch.__config__.show()` names for BLAS / LAPACK work, or just `cpu`. The matrices' *Library* column "
            "(Markdown, RST, HTML, the site) shows only what the results of that row evidence, the distinct "
            "libraries in order (`MKL · hipBLASLt`), and stays empty where nothing ran (a skipped GPU row); "
            "`results show --json` gives each result's `library` and `device` (evidence) beside `row_library` "
            "(the declared label). Every result also records the "
            "`device` it ran on (`cpu`, `cuda:0 NVIDIA H100 80GB HBM3 sm_90`, `cuda:0 AMD Instinct MI300X gfx942`) and, "
            "for a GPU build, the arch list torch was built for (`arch_list`) against the GPUs' archs "
            "(`arch_coverage`, `arch_missing`).",
            "",
            "Outcomes:",
            "",
            "- `pass`: what the check's *a pass proves* column says held.",
            "- `partial`: the feature exists but part of it failed or is not implemented; the message starts with "
            '"partial support:" and names what failed. A ROCm library row that could prove only the library\'s '
            'presence (files, version header, dpkg entry; no API ran it) is `partial` "present, not exercised", '
            "never `pass`; one whose host-side C entry point answered through ctypes (see *Host entry points*) is "
            '`partial` "present, host API called", naming the call and its answer: still not the row\'s feature.',
            "- `fail`: ran and was wrong, or is installed but cannot run here (a module that fails to import with an "
            'undefined symbol or an error inside it, "no kernel image is available" for this GPU\'s arch), with '
            "the evidence.",
            "- `crash` / `timeout`: the check's process died or passed its deadline.",
            "- `unsupported`: the module is genuinely absent (`ModuleNotFoundError` for that name) or the API / op / "
            "backend does not exist in this version.",
            "- `n/a`: the row does not apply to this image, decided by the orchestrator in one rule "
            "(docs/statuses.md): a row of one vendor (`needs: amd` or `needs: nvidia`) on any other image, "
            "and a GPU row (`needs: gpu`) on an image of the `cpu` backend that would be `skip` or "
            "`unsupported`: blank and counted nowhere.",
            "- `skip`: deliberately not run: the row needs a GPU and none is visible (`needs: gpu` below; for the "
            "profiler and SMI rows the GPU is tested before the tool), the catalog does not pin a version, a "
            'row whose evidence the image cannot give ("not measurable: …"), or the host, not the image, stops the check (ncu\'s ERR_NVGPUCTRPERM, '
            "nvidia-smi not injected by the NVIDIA container runtime).",
            "",
            GPU_STATUS,
            "",
            "Host conditions that are not the image's, reported as `skip` with the fix: Nsight Compute's "
            "ERR_NVGPUCTRPERM (`profiler.tool.ncu`): the driver restricts the performance counters to admin users and "
            "valorch drops every capability; fix on the host with the nvidia module option "
            "`NVreg_RestrictProfilingToAdminUsers=0` (e.g. `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in "
            "/etc/modprobe.d, then reload the module or reboot; see NVIDIA's ERR_NVGPUCTRPERM page), or, for images "
            "you trust, `valorch run --profiling-caps`, which adds CAP_SYS_ADMIN to the profiler suite's GPU "
            'containers only (its security cost: docs/architecture.md, "Profiling capabilities"). `nvidia-smi` missing on a GPU host '
            "(`profiler.smi.nvidia_smi`): the NVIDIA container runtime injects it with the `utility` driver "
            "capability (NVIDIA_DRIVER_CAPABILITIES). GPU tasks get HOME and the MIOpen / Triton / inductor / JIT "
            "caches on the /tmp tmpfs, and ROCm GPU tasks a writable root for MIOpen's system databases "
            '(docs/architecture.md, "GPU tasks\' writable state").',
            "",
            "| checks | tested on a real capture | no real capture |",
            "| --- | --- | --- |",
        ]
        + ["| %s | %s | %s |" % tuple(_cell(x) for x in row) for row in REAL_EVIDENCE]
        + [
            "",
            "`nvidia-smi -q -x`: `hosts probe --record` records it; the probe reads it (xml.etree, no DTD, no "
            "external entity) only when a CUDA build of torch sees no GPU: `driver_version` and `cuda_version` (the "
            "newest CUDA the driver supports) say whether the host's driver is older than the image's CUDA (a "
            "runtime needs a driver of its major version or newer; minor versions are compatible), and `current_mig` "
            "whether MIG hides the GPU from a container given no MIG device; `smoke.device`'s failure and the "
            '"needs a GPU" skips then name the cause and the fix. Host detection does not read it: the '
            "`--query-gpu` CSV already gives what matching needs (the GPUs and their compute capability). Persistence "
            "mode and the telemetry are not parsed: no verdict depends on them (persistence mode changes how long "
            "the first CUDA call takes, which no check times).",
            "",
            "Host entry points: ROCm library rows with no Python API call the library's own host-side C API "
            "through ctypes, without a GPU (`valorch_probe/checks/_rocm_host.py`). The call proves that the "
            "library in the image loads and answers, not the row's feature, so the row stays `partial` \"present, "
            'host API called" with the call and its answer; a library file the loader refuses, or a wrong answer, '
            'is a `fail`; a release without the entry point is "present, not exercised". Each symbol, signature '
            "and constant is as the library's public header declares it; the tests call fakes built with "
            "`cc -shared` that export the same symbols (tests/acceptance/test_rocm_host_entry_points.py), and no "
            "real ROCm image has run these calls yet.",
            "",
            "| row | host call | declared in |",
            "| --- | --- | --- |",
        ]
        + ["| %s | %s | %s |" % tuple(_cell(x) for x in row) for row in HOST_ENTRY_POINTS]
        + [
            "",
            "| suite | framework | checks | description |",
            "| --- | --- | --- | --- |",
        ]
    )
    for s in cat["suites"]:
        lines.append(
            "| [%s](#suite-%s) | %s | %d | %s |"
            % (
                s["name"],
                s["name"],
                _cell(s["framework"]),
                len(s["checks"]),
                _cell(s["description"]),
            )
        )
    for s in cat["suites"]:
        lines += ["", "## Suite `%s`" % s["name"], "", _cell(s["description"]), ""]
        if not s["checks"]:
            lines.append(
                "Declared by a job (see the description above): a pass proves that the declared command "
                "or upstream test passed in this image, nothing more."
            )
            continue
        lines += [
            "| id | feature | kind | row library | needs | a pass proves | a pass does not prove |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for cid in s["checks"]:
            c = checks[cid]
            limits = c["limits"] or (
                "nothing about the image: a planted harness self-test"
                if s["name"] == "selftest"
                else ""
            )
            lines.append(
                "| `%s` | %s | %s | %s | %s | %s | %s |"
                % (
                    cid,
                    _cell(c["feature"]),
                    c["kind"],
                    _cell(c["library"]),
                    _cell(", ".join(c["needs"])),
                    _cell(c["description"]),
                    _cell(limits),
                )
            )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(ROOT / "docs" / "checks.md"))
    p.add_argument("--check", action="store_true", help="fail if the file is out of date")
    args = p.parse_args(argv)
    text = render()
    out = Path(args.out)
    if args.check:
        if not out.exists() or out.read_text() != text:
            sys.stderr.write("%s is out of date: run scripts/gen-checks-doc.py\n" % out)
            return 1
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(
        "wrote %s (%d suites, %d checks)"
        % (out, len(catalog()["suites"]), len(catalog()["checks"]))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
