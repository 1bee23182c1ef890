"""`valorch hosts probe --record DIR` writes what valorch parses about this machine's GPUs,
scrubbed of serial numbers, UUIDs and host names, and a recorded directory becomes fixtures
(hosts/record_fixtures.py) that the parsers and the torch stand-in read back."""

import json
import shutil

from gpu_fakes import FIX, run_probe, tool_printing

from orchestrator.hosts.record_fixtures import to_fixtures
from valorch_probe import tool_output

REAL = FIX / "tools" / "real"


def test_record_on_a_cpu_host_writes_cpu_facts_and_no_gpu_evidence(cli, tmp_path):
    rec = tmp_path / "rec"
    res = cli("hosts", "probe", "--record", str(rec), "--json", env={"PATH": "/usr/bin:/bin"})
    assert res.returncode == 0, res.stderr
    manifest = json.loads(res.stdout)
    assert manifest == json.loads((rec / "manifest.json").read_text())
    assert manifest["gpu"] is False and manifest["cpu"] and manifest["machine"]
    ev = " | ".join(manifest["no_gpu_evidence"])
    assert "nvidia-smi: not found" in ev and "rocm-smi: not found" in ev and "no KFD topology" in ev
    facts = json.loads((rec / "torch" / "device-properties.json").read_text())
    assert facts.get("available") is False or "error" in facts
    lines = [
        json.loads(ln) for ln in (rec / "probe" / "results.jsonl").read_text().splitlines() if ln
    ]
    results = {r["check"]: r for r in lines if r["type"] == "result"}
    assert "env.facts" in results and results["smoke.device"]["status"] == "skip"
    assert manifest["probe"]["results"] == len(results) and manifest["probe"]["kernel_names"] == 0
    assert not (rec / "smi").exists()
    # a second record into a directory of other data is refused, with what to do
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x").write_text("mine")
    bad = cli("hosts", "probe", "--record", str(tmp_path / "other"))
    assert (
        bad.returncode == 2
        and "not an empty directory" in bad.stderr
        and "Traceback" not in bad.stderr
    )


def test_record_scrubs_identifiers_of_real_captures(cli, tmp_path):
    """The SMI tools replaced by ones printing real public captures that carry a unique id, a
    UUID and a serial number (tests/fixtures/tools/real/README.md)."""
    bindir = tmp_path / "bin"
    tool_printing(bindir, "nvidia-smi", REAL / "nvidia-smi-query-gpu-h100x8.csv")
    tool_printing(bindir, "rocm-smi", REAL / "rocm-smi-json-navi31.json")
    tool_printing(bindir, "amd-smi", REAL / "amd-smi-list-mi210.txt")
    rec = tmp_path / "rec"
    res = cli(
        "hosts", "probe", "--record", str(rec), "--json", env={"PATH": f"{bindir}:/usr/bin:/bin"}
    )
    assert res.returncode == 0, res.stderr
    manifest = json.loads(res.stdout)
    assert manifest["gpu"] is True  # nvidia-smi answered
    everything = "".join(p.read_text() for p in rec.rglob("*") if p.is_file())
    for secret in (
        "0x3d4595974090853c",
        "67ff740f-0000-1000-80e6-b5bb3c3ce0db",
        "FPL250300A1EC0V2",
    ):
        assert secret not in everything, secret
    assert manifest["scrubbed"]["smi/rocm-smi-showproductname.json"] >= 1
    assert manifest["scrubbed"]["smi/amd-smi-static-asic.json"] >= 2
    assert (
        tool_output.rocm_smi_cards((rec / "smi" / "rocm-smi-showproductname.json").read_text())[0][
            "gfx"
        ]
        == "gfx1100"
    )  # the rest is kept


def test_a_recorded_directory_becomes_fixtures_the_parsers_and_the_probe_read(tmp_path):
    """A record as an MI250X / MI300X host would leave it (its SMI output and torch's device
    properties from the real captures), turned into fixtures, read back by the parsers and
    by the real probe through the torch stand-in."""
    rec = tmp_path / "rec"
    (rec / "smi").mkdir(parents=True)
    (rec / "probe").mkdir()
    (rec / "torch").mkdir()
    (rec / "manifest.json").write_text("{}")
    shutil.copy(
        REAL / "rocm-smi-showproductname-mi250x.json", rec / "smi" / "rocm-smi-showproductname.json"
    )
    (rec / "torch" / "device-properties.json").write_text(
        json.dumps(
            {
                "torch": "2.4.0+rocm6.1",
                "hip": "6.1.40091",
                "cuda": None,
                "available": True,
                "arch_list": ["gfx90a", "gfx942"],
                "devices": [
                    {
                        "index": 0,
                        "name": "AMD Instinct MI300X",
                        "major": 9,
                        "minor": 4,
                        "gcnArchName": "gfx942:sramecc+:xnack-",
                        "total_memory": 206141652992,
                        "multi_processor_count": 304,
                    }
                ],
            }
        )
    )
    (rec / "probe" / "results.jsonl").write_text("")
    (rec / "probe" / "kernel-names.tsv").write_text(
        "# check\tkernel\nkernels.conv2d.fp32\tnaive_conv_fwd_nchw_fp32\nkernels.matmul.fp32\tattn_fwd_unknown\n"
    )
    fixtures = tmp_path / "fixtures"
    written = to_fixtures(rec, fixtures, "mi300x-test")
    assert fixtures / "fake_torch" / "mi300x-test.json" in written
    cards = tool_output.rocm_smi_cards(
        (
            fixtures / "tools" / "recorded" / "mi300x-test" / "rocm-smi-showproductname.json"
        ).read_text()
    )
    assert cards[0]["gfx"] == "gfx9010" and tool_output.same_gfx(cards[0]["gfx"], "gfx90a")
    rows = (fixtures / "evidence" / "kernel-names-mi300x-test.tsv").read_text().splitlines()[1:]
    assert rows == ["naive_conv_fwd_nchw_fp32\tamd\tMIOpen", "attn_fwd_unknown\tamd\tAOTriton"]
    res = run_probe(
        tmp_path,
        fixtures / "fake_torch" / "mi300x-test.json",
        "smoke",
        "env.build.backend",
        expect={"backend": "rocm"},
    )
    assert res["env.build.backend"]["status"] == "pass"
    assert res["env.build.backend"]["metrics"]["gpu_archs"] == "gfx942"
