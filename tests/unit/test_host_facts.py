"""hosts.facts over detection reports as a ROCm and a CUDA host give them."""

import json

from orchestrator.hosts.facts import host_facts

ROCM_HOST = {
    "kernel": "6.8.0-45-generic",
    "facts": {
        "cpuinfo": "processor\t: 0\nmodel name\t: AMD EPYC 9654 96-Core Processor\nprocessor\t: 1\n"
        "model name\t: AMD EPYC 9654 96-Core Processor\n",
        "meminfo": "MemTotal:       1584842044 kB\nMemFree: 1 kB\n",
        "modules": {"amdgpu": "6.8.5\n", "nvidia": None},
        "rocm": {"rocm-6.3.1/.info/version": "6.3.1-48\n"},
        "cuda": {},
    },
    "engine": {
        "ServerVersion": "27.3.1",
        "DefaultRuntime": "runc",
        "Runtimes": {"runc": {}},
        "OperatingSystem": "Ubuntu 22.04.5 LTS",
    },
}
SMI = (
    "| NVIDIA-SMI 550.90.07              Driver Version: 550.90.07      CUDA Version: 12.4     |\n"
)
CUDA_HOST = {
    "kernel": "5.15.0-119-generic",
    "facts": {
        "cpuinfo": None,
        "meminfo": None,
        "modules": {"amdgpu": None, "nvidia": ""},
        "rocm": {},
        "cuda": {"cuda-12.4/version.json": json.dumps({"cuda": {"version": "12.4.1"}})},
        "nvidia_smi": SMI,
    },
    "engine": {
        "NCPU": 64,
        "MemTotal": 540_000_000_000,
        "ServerVersion": "24.0.7",
        "DefaultRuntime": "nvidia",
        "Runtimes": {"nvidia": {}, "runc": {}},
    },
}


def test_rocm_host():
    facts = {f.name: f for f in host_facts(ROCM_HOST)}
    assert (
        facts["cpu model"].value == "AMD EPYC 9654 96-Core Processor" and facts["cpus"].value == "2"
    )
    assert facts["memory"].value == "1511.4 GiB"
    assert (
        facts["gpu driver"].value == "amdgpu 6.8.5"
        and facts["gpu driver"].evidence == "/sys/module/amdgpu/version"
    )
    assert (
        facts["rocm"].value == "6.3.1-48"
        and facts["rocm"].evidence == "/opt/rocm-6.3.1/.info/version"
    )
    assert (
        facts["container runtime"].value == "docker 27.3.1, default runtime runc (runtimes: runc)"
    )
    assert "cuda toolkit" not in facts


def test_cuda_host_from_engine_and_nvidia_smi():
    facts = [(f.name, f.value, f.evidence) for f in host_facts(CUDA_HOST)]
    assert ("cpus", "64", "docker info (NCPU)") in facts
    assert ("memory", "502.9 GiB", "docker info (MemTotal)") in facts
    assert (
        "gpu driver",
        "nvidia 550.90.07",
        "nvidia-smi",
    ) in facts  # the module has no version file
    assert ("cuda toolkit", "12.4.1", "/usr/local/cuda-12.4/version.json") in facts
    assert ("cuda (driver supports)", "12.4", "nvidia-smi") in facts
    assert (
        "kernel",
        "5.15.0-119-generic",
        "uname -r in the detection container (the host's kernel)",
    ) in facts


def test_loaded_module_without_version():
    report = dict(ROCM_HOST, facts=dict(ROCM_HOST["facts"], modules={"amdgpu": ""}))
    drivers = [(f.value, f.evidence) for f in host_facts(report) if f.name == "gpu driver"]
    assert drivers == [
        ("amdgpu (in-kernel, 6.8.0-45-generic)", "/sys/module/amdgpu (no version file)")
    ]


def test_no_evidence_no_fact():
    assert host_facts({}) == ()
