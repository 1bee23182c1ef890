"""L0 preflight on the real engine: the tiny container with the CPU device options starts;
a host that declares an AMD GPU this machine does not have fails L0 (device nodes, and the
engine refuses the ROCm device options), is quarantined for the batch, and gets nothing."""

import json

from registry_support import run_cli

from orchestrator.services import preflight
from orchestrator.spec import GPU, HostSpec

FAKE_AMD = HostSpec(
    name="fake-mi300",
    labels=("rocm", "gfx942"),
    render_gid=109,
    gpus=(GPU(vendor="amd", arch="gfx942", index=0, render_minor=128),),
)


def test_cpu_device_options_container_starts():
    probe = preflight.container_probe(HostSpec(name="local"), "cpu")
    assert probe.ok, probe.detail
    assert "started with the cpu device options" in probe.detail


def test_rocm_device_options_refused_here():
    probe = preflight.container_probe(FAKE_AMD, "rocm")
    assert not probe.ok and "/dev/kfd" in probe.detail
    verdict = preflight.level0(FAKE_AMD, "rocm")
    assert not verdict.ok and "device_nodes: missing /dev/kfd" in verdict.reason


def hosts_file(tmp_path):
    path = tmp_path / "hosts.yaml"
    path.write_text(
        "hosts:\n  - name: fake-mi300\n    endpoint: unix:///var/run/docker.sock\n"
        "    labels: [rocm, gfx942]\n    render_gid: 109\n"
        "    gpus: [{vendor: amd, arch: gfx942, index: 0, render_minor: 128}]\n"
        "  - name: cpu-box\n    endpoint: unix:///var/run/docker.sock\n"
    )
    return path


def test_hosts_check_level_0(tmp_path):
    done = run_cli(
        "hosts",
        "check",
        "--level",
        "0",
        "--hosts",
        str(hosts_file(tmp_path)),
        "--json",
        env={"VALORCH_DB": str(tmp_path / "v.sqlite")},
    )
    assert done.returncode == 3, done.stderr
    rows = {r["host"]: r for r in json.loads(done.stdout)["hosts"]}
    assert any(
        "L0 preflight: device_nodes: missing /dev/kfd" in p for p in rows["fake-mi300"]["problems"]
    )
    assert rows["cpu-box"]["problems"] == [] and rows["cpu-box"]["preflight"][0]["ok"]


def test_failing_host_is_quarantined_and_gets_nothing(tmp_path):
    db = {"VALORCH_DB": str(tmp_path / "v.sqlite")}
    done = run_cli(
        "run",
        "--image",
        "rocm6.3_py3.12_pytorch_2.4",
        "--hosts",
        str(hosts_file(tmp_path)),
        "--json",
        env=db,
    )
    assert done.returncode == 3
    assert "quarantined fake-mi300 for this batch: device_nodes: missing /dev/kfd" in done.stderr
    assert (
        "quarantined for this batch: fake-mi300 (device_nodes" in done.stderr
        and "Traceback" not in done.stderr
    )
    assert json.loads(run_cli("results", "list", "--json", env=db).stdout) == []
    # CPU work is not held back by a GPU host's preflight
    ok = run_cli(
        "run",
        "--image",
        "cpu_debian11_py3.9",
        "--hosts",
        str(hosts_file(tmp_path)),
        "--json",
        "--no-matrix",
        env=db,
    )
    assert ok.returncode == 0, ok.stderr
    assert "quarantined" not in ok.stderr
