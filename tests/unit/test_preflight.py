"""Preflight parsers on recorded outputs (amd-smi, nvidia-smi, dcgmi diag -r 1, rvs, dmesg)."""

from datetime import datetime, timezone
from pathlib import Path

from orchestrator.hosts import preflight as pf

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "preflight"


def read(name):
    return (FIX / name).read_text()


def test_amd_smi_health():
    gpus = pf.parse_amd_smi_metric(read("amd-smi-metric.json"))
    assert gpus[0] == {
        "gpu": 0,
        "temperature_c": 41.0,
        "ecc_uncorrectable": 0.0,
    }  # edge is N/A on MI300X: hotspot counts
    assert gpus[1]["temperature_c"] == 98.0 and gpus[1]["ecc_uncorrectable"] == 2.0
    apps = pf.parse_amd_smi_process(read("amd-smi-process.json"))
    assert apps == [{"pid": 48213, "name": "python3", "mb": 21476933632 / 2**20}]
    probes = {p.name: p for p in pf.health(gpus, apps)}
    assert probes["gpu0.temperature"].ok and probes["gpu0.ecc"].ok
    assert not probes["gpu1.temperature"].ok and probes["gpu1.temperature"].detail == "98 C"
    assert not probes["gpu1.ecc"].ok and probes["gpu1.ecc"].detail == "2 uncorrectable"
    other = probes["gpu.other_processes"]
    assert not other.ok and "python3 (pid 48213, 20482 MB)" in other.detail
    assert all(p.ok for p in pf.health(gpus[:1], []))


def test_nvidia_smi_health():
    gpus = pf.parse_nvidia_health(read("nvidia-health.csv"))
    assert [g["gpu"] for g in gpus] == [0, 1, 2, 3]
    assert gpus[2]["ecc_uncorrectable"] is None and gpus[3]["ecc_uncorrectable"] == 3.0
    apps = pf.parse_nvidia_apps(read("nvidia-apps.csv"))
    assert apps == [{"pid": 731904, "name": "/usr/bin/python3", "mb": 61436.0}]
    probes = {p.name: p for p in pf.health(gpus, apps)}
    assert (
        probes["gpu2.ecc"].ok and probes["gpu2.ecc"].detail == "not reported"
    )  # ECC off: not a failure
    assert not probes["gpu3.ecc"].ok and probes["gpu2.temperature"].ok  # 91 C is under the limit
    assert not probes["gpu.other_processes"].ok


def test_dcgmi_diag_and_rvs():
    assert pf.parse_dcgmi_diag(read("dcgmi-diag-r1.txt")) == [
        ("Page Retirement/Row Remap", "Fail - GPU: 3: GPU 3 There are 1 pending row remaps")
    ]
    assert pf.parse_dcgmi_diag(read("dcgmi-diag-r1-pass.txt")) == []
    assert pf.parse_rvs(read("rvs-gpup.txt")) == [
        "[RESULT] [1163224.541228] [RVS-GPUP-TC1] gpup 45412 pass: FALSE"
    ]


def test_kernel_log_in_the_job_window():
    text = read("dmesg-iso.txt")
    every = pf.scan_kernel_log(text)
    assert (
        len(every) == 5
    )  # page fault, ring timeout, GPU reset, Xid 79, Xid 48; not Xid 13, not RAS init
    assert not any("Xid (PCI:0000:18:00): 13" in line for line in every)
    assert not any("initialized successfully" in line for line in every)
    window = pf.scan_kernel_log(
        text,
        since=datetime(2026, 11, 23, 10, 0, tzinfo=timezone.utc),
        until=datetime(2026, 11, 23, 10, 30, tzinfo=timezone.utc),
    )
    assert [("page fault" in w, "timeout" in w, "reset" in w) for w in window] == [
        (True, False, False),
        (False, True, False),
        (False, False, True),
    ]
    assert pf.scan_kernel_log(text, since=datetime(2026, 11, 23, 12, 0, tzinfo=timezone.utc)) == []


def test_device_nodes(tmp_path):
    assert not pf.device_nodes("amd", str(tmp_path)).ok
    assert "missing" in pf.device_nodes("amd", str(tmp_path)).detail
    (tmp_path / "dri").mkdir()
    (tmp_path / "kfd").touch()
    (tmp_path / "dri" / "renderD128").touch()
    assert pf.device_nodes("amd", str(tmp_path)).ok
    for n in ("nvidiactl", "nvidia-uvm", "nvidia0"):
        (tmp_path / n).touch()
    assert pf.device_nodes("nvidia", str(tmp_path)).ok
