"""The probe's parsers against real ROCm user space: what Debian's HIP, MIOpen, rocBLAS,
hipBLASLt and RCCL answered to their own version calls, and what rocminfo, rocm-smi and
amd-smi printed without a GPU (tests/fixtures/rocm-userspace/README.md and
tests/fixtures/rocm-rccl/README.md say where each came from), beside a real rocminfo of a GPU
host (tests/fixtures/tools/real/)."""

import json
from pathlib import Path

from valorch_probe import loaded_libs
from valorch_probe import tool_output as t
from valorch_probe.checks.profiler_tools import smi_readback

FIX = Path(__file__).resolve().parents[1] / "fixtures"
HERE = FIX / "rocm-userspace"
ANSWERS = json.loads((HERE / "library-answers.json").read_text())
DPKG = dict(line.split("\t") for line in (HERE / "dpkg-versions.tsv").read_text().splitlines())


def test_each_library_answers_its_own_version_beside_a_different_package_version():
    found = loaded_libs.versions(ANSWERS)
    assert {n: v["version"] for n, v in found.items()} == {
        "hip": "6.4.43484",  # HIP_VERSION 60443484
        "miopen": "3.4.0",
        "rocblas": "4.4.1",  # "4.4.1." : the string's first three numbers
        "hipblaslt": "1.1.0",  # 100100 = 1 * 100000 + 1 * 100 + 0
    }
    # Debian numbers these packages by the ROCm release: the library's own version differs
    assert DPKG["libamdhip64-6"] == "6.4.3-5" and DPKG["librocblas4"] == "6.4.4-4"
    assert DPKG["libhipblaslt1"] == "7.1.1+dfsg-4" and DPKG["libmiopen1"] == "6.4.3+dfsg-1+b1"
    hip = found["hip"]
    assert hip["path"] == "/usr/lib/x86_64-linux-gnu/libamdhip64.so.6.4.43484"
    assert hip["evidence"].startswith("hipRuntimeGetVersion() of /usr/lib/x86_64-linux-gnu/")
    assert "loaded by the probe" in hip["evidence"]


def test_debians_rccl_answers_ncclgetversion_in_nccls_encoding():
    # tests/fixtures/rocm-rccl/: librccl1 5.4.3 with HIP 5.7 from trixie, no GPU
    here = FIX / "rocm-rccl"
    dpkg = dict(line.split("\t") for line in (here / "dpkg-versions.tsv").read_text().splitlines())
    found = loaded_libs.versions(json.loads((here / "library-answers.json").read_text()))
    assert {n: v["version"] for n, v in found.items()} == {
        "rccl": "2.13.4",  # 21304: NCCL_VERSION(2,13,4) = 2 * 10000 + 13 * 100 + 4
        "hip": "5.7.31921",  # HIP_VERSION 50731921
    }
    assert dpkg["librccl1"] == "5.4.3-3+b1" and dpkg["libamdhip64-5"] == "5.7.1-6+deb13u1"
    rccl = found["rccl"]
    assert rccl["path"] == "/usr/lib/x86_64-linux-gnu/librccl.so.1.0"
    assert rccl["evidence"].startswith("ncclGetVersion() of /usr/lib/x86_64-linux-gnu/")


def test_a_rocblas_string_without_numbers_is_no_version():
    assert loaded_libs.decode("rocblas", ["4.4.1."]) == "4.4.1"
    assert loaded_libs.decode("rocblas", ["unknown"]) is None
    assert loaded_libs.decode("rocblas", [-1]) is None  # the call failed
    assert loaded_libs.decode("hipblaslt", [-1]) is None


def test_rocminfo_without_a_driver_prints_no_agent_and_says_why():
    text = (HERE / "rocminfo.txt").read_text()
    assert t.rocminfo_agents(text) == []
    assert t.last_words(text) == "ROCk module is NOT loaded, possibly no GPU devices"


def test_rocminfo_of_a_real_gpu_host_lists_its_gpu_agent_only():
    text = (FIX / "tools" / "real" / "rocminfo-support-mi300x-vf.txt").read_text()
    # the CPU agent and the ISA names ("amdgcn-amd-amdhsa--gfx942:...") are not GPU agents
    assert t.rocminfo_agents(text) == [{"name": "AMD Instinct MI300X VF", "gfx": "gfx942"}]
    facts = smi_readback("rocminfo", text, [{"name": "MI300X", "arch": "gfx942:sramecc+:xnack-"}])
    assert facts["devices"] == 1 and facts["matched"]


def test_smi_tools_without_a_driver_print_no_device_only_their_error():
    for tool, name, said in (
        (
            "rocm-smi",
            "rocm-smi-showproductname-json.txt",
            "ERROR:root:Driver not initialized (amdgpu not found in modules)",
        ),
        (
            "amd-smi",
            "amd-smi-static-asic-json.txt",
            "ERROR:root:Drivers not loaded (amdgpu, amd_hsmp, ionic, bnxt_en drivers not found "
            "in modules)",
        ),
    ):
        text = (HERE / name).read_text()
        assert smi_readback(tool, text, [])["devices"] == 0, tool
        assert t.last_words(text) == said


def test_last_words_are_capped_and_never_empty():
    assert t.last_words("") == "nothing"
    assert len(t.last_words("x" * 5000)) == 400
    assert t.last_words("a\n\nb\nc\nd\n") == "b | c | d"


def test_unstable_is_named_for_what_its_release_files_say():
    from valorch_probe.inventory import gather

    found = {c["name"]: c for c in gather(str(HERE), commands=False)["components"]}
    # no VERSION_ID in unstable's os-release: /etc/debian_version names it instead
    assert found["os"]["value"] == "debian"
    assert found["debian"]["value"] == "forky/sid"
    assert found["debian"]["evidence"] == "/etc/debian_version"


def test_unstable_has_an_os_release_the_os_row_can_name():
    """env.version.os on unstable: no VERSION_ID, so the row reads /etc/debian_version (the
    image's captured file) rather than saying "not found"; a numbered release keeps
    os-release's VERSION_ID."""
    from valorch_probe.checks._versions import os_release
    from valorch_probe.checks.smoke import os_version

    osr = os_release(str(HERE / "etc" / "os-release"))
    assert "VERSION_ID" not in osr and osr["ID"] == "debian"
    debian_version = str(HERE / "etc" / "debian_version")
    assert os_version(osr, debian_version) == ("forky/sid", debian_version)
    assert os_version({"ID": "debian", "VERSION_ID": "12"}) == ("12", "/etc/os-release")
    assert os_version({"ID": "ubuntu"}) == (None, "/etc/os-release")
