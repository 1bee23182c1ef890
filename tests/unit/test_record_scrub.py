"""Scrubbing of recorded tool output (orchestrator/hosts/scrub.py) on identifiers as the
real tools print them (tests/fixtures/tools/real/README.md names each source)."""

from pathlib import Path

from orchestrator.hosts.scrub import SCRUBBED, scrub

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "tools" / "real"


def test_identifiers_of_real_captures_are_scrubbed_and_the_rest_kept():
    navi = (REAL / "rocm-smi-json-navi31.json").read_text()
    out, n = scrub(navi)
    assert "0x3d4595974090853c" not in out and '"Unique ID": "%s"' % SCRUBBED in out
    assert '"GFX Version": "gfx1100"' in out and '"Device ID": "0x744c"' in out and n >= 2
    lst = (REAL / "amd-smi-list-mi210.txt").read_text()
    out, _ = scrub(lst, hostnames=["lsttserver7"])
    assert "67ff740f-0000-1000-80e6-b5bb3c3ce0db" not in out and "FPL250300A1EC0V2" not in out
    assert "lsttserver7" not in out and "BDF: 0000:23:00.0" in out and "KFD_ID: 63484" in out
    props = (REAL / "torch-device-properties-mi300x.txt").read_text()
    out, _ = scrub(props)
    assert (
        "65303434-3830-3136-3839-323537666234" not in out
        and "gcnArchName='gfx942:sramecc+:xnack-'" in out
    )
    smi_l = (REAL / "nvidia-smi-L-titanv-rtx5880.txt").read_text()
    out, _ = scrub(smi_l)
    assert (
        "b5169cef" not in out
        and "GPU 0: NVIDIA TITAN V (UUID: GPU-00000000-0000-0000-0000-000000000000)" in out
    )
    rocminfo = (
        "  Name:                    gfx942\n  Uuid:                    GPU-8af705259683161c\n"
    )
    out, _ = scrub(rocminfo)
    assert "8af705259683161c" not in out and "Name:                    gfx942" in out


def test_xml_tags_of_nvidia_smi_q_x():
    xml = (
        '<gpu id="00000000:1B:00.0">\n<product_name>NVIDIA H100 80GB HBM3</product_name>\n'
        "<serial>1654123456789</serial>\n<uuid>GPU-6f1c2a7e-0000-1111-2222-333344445555</uuid>\n"
        "<board_id>0x1b00</board_id>\n</gpu>"
    )
    out, n = scrub(xml)
    assert "<serial>%s</serial>" % SCRUBBED in out and "<uuid>%s</uuid>" % SCRUBBED in out
    assert "<product_name>NVIDIA H100 80GB HBM3</product_name>" in out and n == 2


def test_a_real_nvidia_smi_q_x_keeps_what_valorch_parses():
    from valorch_probe.tool_output import nvidia_smi_xml

    out, n = scrub((REAL / "nvidia-smi-q-x-a100-sxm4-mig.xml").read_text())
    assert "1324321002473" not in out and "27b94a00" not in out and n == 2
    assert nvidia_smi_xml(out)["cuda_version"] == "11.6"
