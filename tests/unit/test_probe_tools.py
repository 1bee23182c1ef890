"""The external profilers' and SMI tools' output, parsed as the probe's profiler
checks parse it (tests/fixtures/tools: the tools' documented output formats with
the probe's tiny workload as the profiled program). The tools themselves need a
GPU and are absent here; the checks' GPU paths are not run by this suite."""

from pathlib import Path

from valorch_probe import tool_output as t
from valorch_probe.checks.profiler_tools import RANGE, TINY_KERNELS, smi_readback

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "tools"


def tree(sub):
    return {str(p): p.read_text() for p in (FIX / sub).rglob("*.csv")}


def test_rocprofv3_kernel_trace_and_stats_name_the_tiny_kernels():
    names = t.rocprof_names(tree("rocprofv3"))
    found = t.matching(names, TINY_KERNELS)
    assert any("MulFunctor" in n for n in found) and any("reduce_kernel" in n for n in found)
    assert "__amd_rocclr_fillBufferAligned" in names  # the runtime's own kernels are recorded too
    assert len(names) == len(set(names))


def test_rocprofv3_marker_trace_shows_the_roctx_range():
    files = {k: v for k, v in tree("rocprofv3").items() if "marker" in k}
    assert t.matching(t.rocprof_names(files), RANGE) == [RANGE]


def test_rocprof_v1_results_csv():
    names = t.rocprof_names(tree("rocprof"))
    assert len(t.matching(names, TINY_KERNELS)) == 2


def test_nsys_stats_csv_after_its_banner():
    kern = t.nsys_names((FIX / "nsys-stats-cuda_gpu_kern_sum.txt").read_text())
    assert len(kern) == 3 and all(t.matching([n], TINY_KERNELS) for n in kern)
    ranges = t.nsys_names((FIX / "nsys-stats-nvtx_sum.txt").read_text())
    assert t.matching(ranges, RANGE) == [":valorch-nvtx-range"]
    assert t.nsys_names("Processing ...\nSKIPPED: no data") == []


def test_ncu_csv_after_prof_lines():
    names = t.ncu_names((FIX / "ncu-csv.txt").read_text())
    assert len(names) == 3 and any("reduce_kernel" in n for n in names)
    assert t.ncu_names("==PROF== Connected\n==ERROR== ERR_NVGPUCTRPERM") == []


def test_rocm_smi_reads_back_gfx_including_the_decimal_stepping():
    mi300 = (FIX / "rocm-smi-showproductname-mi300x.json").read_text()
    cards = t.rocm_smi_cards(mi300)
    assert [c["gfx"] for c in cards] == ["gfx942", "gfx942"] and cards[0][
        "name"
    ] == "AMD Instinct MI300X OAM"
    facts = smi_readback("rocm-smi", mi300, [{"name": "AMD Instinct MI300X", "arch": "gfx942"}])
    assert facts["matched"] and facts["devices"] == 2
    mi250 = (FIX / "rocm-smi-showproductname-mi250.txt").read_text()  # a warning precedes the JSON
    assert smi_readback("rocm-smi", mi250, [{"name": "AMD Instinct MI250X", "arch": "gfx90a"}])[
        "matched"
    ]
    assert not smi_readback("rocm-smi", mi250, [{"name": "x", "arch": "gfx942"}])["matched"]


def test_amd_smi_both_json_layouts():
    old = t.amd_smi_gpus((FIX / "amd-smi-static-asic-list.json").read_text())
    new = t.amd_smi_gpus((FIX / "amd-smi-static-asic-gpu_data.json").read_text())
    assert old == [{"gpu": "0", "name": "AMD Instinct MI210", "gfx": "gfx90a"}]
    assert new[0]["gfx"] == "gfx942"
    assert smi_readback(
        "amd-smi",
        (FIX / "amd-smi-static-asic-gpu_data.json").read_text(),
        [{"name": "AMD Instinct MI300X", "arch": "gfx942"}],
    )["matched"]
    assert t.same_gfx("GFX940", "gfx940") and t.amd_smi_gpus("not json") == []


def test_nvidia_smi_compute_capability_against_torch():
    text = (FIX / "nvidia-smi-query-gpu.csv").read_text()
    gpus = t.nvidia_smi_gpus(text)
    assert (
        len(gpus) == 2
        and gpus[0]["name"] == "NVIDIA H100 80GB HBM3"
        and t.sm_of(gpus[0]["compute_cap"]) == "sm_90"
    )
    assert smi_readback("nvidia-smi", text, [{"name": "NVIDIA H100 80GB HBM3", "arch": "sm_90"}])[
        "matched"
    ]
    assert not smi_readback("nvidia-smi", text, [{"name": "NVIDIA A100", "arch": "sm_80"}])[
        "matched"
    ]
    assert (
        t.nvidia_smi_gpus(
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
        )
        == []
    )


# -- real captures (tests/fixtures/tools/real/README.md names each source) -----------------

REAL = FIX / "real"


def test_nvidia_smi_csv_of_real_h100s_and_of_fields_in_another_order():
    h100 = t.nvidia_smi_gpus((REAL / "nvidia-smi-query-gpu-h100x8.csv").read_text())
    assert (
        len(h100) == 8 and {g["compute_cap"] for g in h100} == {"9.0"} and h100[7]["index"] == "7"
    )
    assert smi_readback(
        "nvidia-smi",
        (REAL / "nvidia-smi-query-gpu-h100x8.csv").read_text(),
        [{"name": "NVIDIA H100 80GB HBM3", "arch": "sm_90"}],
    )["matched"]
    mixed = t.nvidia_smi_gpus((REAL / "nvidia-smi-query-gpu-titanv-rtx5880.csv").read_text())
    assert [(g["index"], g["name"], t.sm_of(g["compute_cap"]), g["driver"]) for g in mixed] == [
        ("0", "NVIDIA TITAN V", "sm_70", "570.86.15"),
        ("1", "NVIDIA RTX 5880 Ada Generation", "sm_89", "570.86.15"),
    ]


def test_rocm_smi_json_of_a_real_mi250x_spells_gfx90a_in_decimal():
    text = (REAL / "rocm-smi-showproductname-mi250x.json").read_text()
    cards = t.rocm_smi_cards(text)
    assert cards == [
        {"card": "card0", "name": "AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2", "gfx": "gfx9010"}
    ]
    assert smi_readback("rocm-smi", text, [{"name": "AMD Instinct MI250X", "arch": "gfx90a"}])[
        "matched"
    ]
    assert not smi_readback("rocm-smi", text, [{"name": "AMD Instinct MI300X", "arch": "gfx942"}])[
        "matched"
    ]


def test_profiler_table_rows_of_a_real_cuda_run_name_their_libraries():
    from valorch_probe import evidence

    rows = (REAL / "torch-profiler-table-cuda-vllm-omni-553.txt").read_text().splitlines()
    names = [r[:55].strip() for r in rows if r.strip().startswith("void ")]
    assert [evidence.library_of_kernel(n, "nvidia") for n in names] == [
        "CUB",
        "PyTorch (ATen native)",
        "PyTorch (ATen native)",
    ]
    assert evidence.libraries_of(names, "nvidia") == ["CUB"]


def test_amd_smi_json_of_a_real_run_after_the_warnings_amdsmi_printed():
    """The probe reads the tool's stderr with its stdout: the SyntaxWarnings a newer Python prints
    for amdsmi come first, then the document (with the gpu_data wrapper)."""
    text = (REAL / "amd-smi-static-json-rx7800xt.txt").read_text()
    assert t.amd_smi_gpus(text) == [{"gpu": "0", "name": "AMD Radeon RX 7800 XT", "gfx": "gfx1101"}]
    assert smi_readback("amd-smi", text, [{"name": "AMD Radeon RX 7800 XT", "arch": "gfx1101"}])[
        "matched"
    ]
    # a warning holding a bracket before the document is skipped too
    assert (
        t.amd_smi_gpus("Warning: [amdsmi] something\n" + text.split("\n", 4)[4])[0]["gfx"]
        == "gfx1101"
    )


def test_nvidia_smi_q_x_of_a_real_a100_gives_driver_cuda_persistence_and_mig():
    from valorch_probe.nvidia_driver import no_gpu_note

    facts = t.nvidia_smi_xml((REAL / "nvidia-smi-q-x-a100-sxm4-mig.xml").read_text())
    assert facts["driver_version"] == "510.47.03" and facts["cuda_version"] == "11.6"
    assert facts["gpus"] == [
        {"name": "NVIDIA A100-SXM4-40GB", "mig": "Enabled", "bus_id": "00000000:00:04.0"}
    ]
    # a cu121 torch on this driver: the driver's CUDA 11.6 cannot run CUDA 12 (major versions differ)
    note = no_gpu_note("12.1", facts)
    assert (
        "nvidia-smi lists 1 GPU (driver 510.47.03, CUDA 11.6)" in note
        and "older than this torch's CUDA 12.1" in note
    )
    assert "update the host's NVIDIA driver to one for CUDA 12 or newer" in note
    # CUDA 11.8 on a CUDA 11.6 driver is minor version compatibility: no verdict on the driver, but this
    # A100 has MIG on, and a container sees only the MIG devices it is given
    same_major = no_gpu_note("11.8", facts)
    assert "older than" not in same_major and "sees none" in same_major
    assert "MIG mode is enabled on 00000000:00:04.0" in same_major
    no_mig = dict(facts, gpus=[dict(facts["gpus"][0], mig="Disabled")])
    assert no_gpu_note("11.8", no_mig).endswith("see torch.cuda.is_available()'s warning")
    assert no_gpu_note("12.1", None) == "" and no_gpu_note(None, facts) == ""


def test_nvidia_smi_q_x_that_is_not_the_document_is_nothing():
    assert t.nvidia_smi_xml("") == {} and t.nvidia_smi_xml("index, name\n0, H100\n") == {}
    assert t.nvidia_smi_xml("<other><driver_version>1</driver_version></other>") == {}
    # no external entity is resolved (xml.etree): the entity is an error, not a file read
    assert (
        t.nvidia_smi_xml(
            '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
            "<nvidia_smi_log><driver_version>&e;</driver_version></nvidia_smi_log>"
        )
        == {}
    )
