from pathlib import Path

import pytest

from orchestrator.errors import NoMatchingHostError
from orchestrator.executors.devices import device_options
from orchestrator.executors.docker import container_options
from orchestrator.hosts.detect import amd_gpus_from_kfd, gfx_from_target_version, parse_nvidia_smi
from orchestrator.hosts.match import Requirement, match
from orchestrator.spec import HostSpec, ImageSpec, SuiteRef, Task

FIX = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.mark.parametrize(
    "value,arch",
    [
        (90402, "gfx942"),
        (90010, "gfx90a"),
        (90008, "gfx908"),
        (110000, "gfx1100"),
        (120001, "gfx1201"),
        (90400, "gfx940"),
    ],
)
def test_gfx_target_version(value, arch):
    assert gfx_from_target_version(value) == arch


def test_kfd_topology_fixture():
    gpus = amd_gpus_from_kfd(FIX / "kfd" / "nodes")
    assert [(g.arch, g.render_minor, g.index) for g in gpus] == [
        ("gfx942", 128, 0),
        ("gfx942", 129, 1),
    ]
    assert [g.arch for g in amd_gpus_from_kfd(FIX / "kfd_mi250" / "nodes")] == ["gfx90a"]
    assert amd_gpus_from_kfd(FIX / "nonexistent") == ()


def test_nvidia_smi_fixture():
    gpus = parse_nvidia_smi((FIX / "nvidia-smi.csv").read_text())
    assert [(g.arch, g.index, g.memory_mib) for g in gpus] == [
        ("sm_90", 0, 81559),
        ("sm_90", 1, 81559),
    ]
    assert gpus[0].product == "NVIDIA H100 80GB HBM3" and gpus[0].uuid.startswith("GPU-")


MI300 = HostSpec(
    name="mi300x-01",
    labels=("rocm", "gfx942"),
    gpus=amd_gpus_from_kfd(FIX / "kfd" / "nodes"),
    render_gid=109,
    video_gid=44,
)
H100 = HostSpec(
    name="h100-01",
    labels=("cuda",),
    nvidia_runtime=True,
    gpus=parse_nvidia_smi((FIX / "nvidia-smi.csv").read_text()),
)
CPU = HostSpec(name="cpu-01", labels=("cpu",))
ROCM_IMG = ImageSpec(alias="r", reference="rocm/pytorch:x", backend="rocm")
CUDA_IMG = ImageSpec(alias="c", reference="pytorch/pytorch:x", backend="cuda")
CPU_IMG = ImageSpec(alias="p", reference="valorch/test:pip-torch", backend="cpu")


def test_rocm_device_options_on_described_host():
    opts = device_options("rocm", MI300)
    assert opts["devices"] == (
        "/dev/kfd:/dev/kfd:rwm",
        "/dev/dri/renderD128:/dev/dri/renderD128:rwm",
        "/dev/dri/renderD129:/dev/dri/renderD129:rwm",
    )
    assert opts["group_add"] == ("video", "109")
    assert opts["security_opt"] == ("seccomp=unconfined",)
    pinned = device_options("rocm", MI300, gpus=(MI300.gpus[1],))
    assert "/dev/dri/renderD128:/dev/dri/renderD128:rwm" not in pinned["devices"]


def test_cuda_device_requests_on_described_host():
    assert device_options("cuda", H100, gpus=(H100.gpus[1],))["gpu_ids"] == (H100.gpus[1].uuid,)
    task = Task(image=CUDA_IMG, suite=SuiteRef(name="smoke"), host=H100, checks=())
    (req,) = container_options(task, "run-1")["device_requests"]
    assert req["DeviceIDs"] == [g.uuid for g in H100.gpus] and req["Capabilities"] == [["gpu"]]


def test_cpu_gets_no_devices():
    assert device_options("cpu", MI300) == {}


def test_container_options_are_locked_down():
    task = Task(image=ROCM_IMG, suite=SuiteRef(name="smoke"), host=MI300, checks=())
    opts = container_options(task, "run-1")
    assert opts["network_mode"] == "none" and opts["privileged"] is False
    assert (
        "no-new-privileges" in opts["security_opt"] and "seccomp=unconfined" in opts["security_opt"]
    )
    assert opts["labels"]["org.valorch.run"] == "run-1"
    assert opts["command"][:3] == ["python3", "-m", "valorch_probe"]
    assert all(isinstance(a, str) for a in opts["command"])
    cpu_task = Task(
        image=ROCM_IMG,
        suite=SuiteRef(name="smoke", network=True),
        host=MI300,
        checks=(),
        cpu_only=True,
    )
    cpu_opts = container_options(cpu_task, "run-2")
    assert "devices" not in cpu_opts and cpu_opts["network_mode"] == "bridge"
    assert (
        "--device" in cpu_opts["command"]
        and cpu_opts["command"][cpu_opts["command"].index("--device") + 1] == "cpu"
    )


def test_matching():
    hosts = (MI300, H100, CPU)
    assert match(Requirement.of(ROCM_IMG), hosts)[0].name == "mi300x-01"
    assert match(Requirement.of(CUDA_IMG), hosts)[0].name == "h100-01"
    assert (
        match(Requirement.of(CPU_IMG), hosts)[0].name == "cpu-01"
    )  # CPU work prefers GPU-less hosts
    assert match(Requirement.of(ROCM_IMG, archs=("gfx942",), gpus=2), hosts)[0].name == "mi300x-01"


def test_no_match_names_missing_hardware_and_nearest_hosts():
    with pytest.raises(NoMatchingHostError) as exc:
        match(Requirement.of(ROCM_IMG, archs=("gfx90a",)), (MI300, CPU), "rocm6.3_x")
    text = str(exc.value)
    assert exc.value.exit_code == 3
    assert "mi300x-01: lacks 1 AMD GPU(s) of arch gfx90a (has 0; GPUs present: gfx942)" in text
    assert "cpu-01" in text and "--cpu-only" in text
    with pytest.raises(NoMatchingHostError) as exc:
        match(Requirement.of(CUDA_IMG), (HostSpec(name="h", gpus=H100.gpus),))
    assert "NVIDIA container runtime" in str(exc.value)
    with pytest.raises(NoMatchingHostError):
        match(Requirement.of(CPU_IMG, labels=("gfx942",)), (CPU,))


def test_kfd_gfx_line_of_a_real_mi300x():
    """The gfx_target_version line as an MI300X's KFD node prints it (ROCm/rocm-cli#343,
    tests/fixtures/tools/real/README.md): a line of `properties`, 90402 -> gfx942."""
    from orchestrator.hosts.detect import (
        gfx_from_target_version,
        gpus_from_detection,
        parse_kfd_properties,
    )

    line = (FIX / "tools" / "real" / "kfd-mi300x-node4-properties-gfx-line.txt").read_text()
    assert gfx_from_target_version(parse_kfd_properties(line)["gfx_target_version"]) == "gfx942"
    gpus = gpus_from_detection(
        {"kfd": {"0": "cpu_cores_count 96\ngfx_target_version 0\n", "4": line}}
    )
    assert [(g.vendor, g.arch, g.index) for g in gpus] == [("amd", "gfx942", 0)]
