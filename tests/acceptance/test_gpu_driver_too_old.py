"""A CUDA build of torch that sees no GPU on a host whose nvidia-smi lists one says why, from
`nvidia-smi -q -x` (a real A100 capture: driver 510.47.03, CUDA 11.6; tests/fixtures/tools/real):
the host's driver is older than the image's CUDA 12.1, with the fix. The real probe runs against
the torch stand-in of a cu121 build with no device (tests/fixtures/fake_torch)."""

from gpu_fakes import FIX, run_probe, tool_printing

A100_XML = FIX / "tools" / "real" / "nvidia-smi-q-x-a100-sxm4-mig.xml"
TOO_OLD = "nvidia-smi lists 1 GPU (driver 510.47.03, CUDA 11.6), older than this torch's CUDA 12.1"


def test_no_gpu_seen_by_torch_names_the_hosts_driver_as_the_cause(tmp_path):
    bindir = tmp_path / "bin"
    tool_printing(bindir, "nvidia-smi", A100_XML)
    res = run_probe(
        tmp_path,
        "cuda-build-no-gpu",
        "smoke",
        "smoke.device",
        expect={"backend": "cuda"},
        bindir=bindir,
    )
    device = res["smoke.device"]
    assert device["status"] == "fail" and "torch.cuda.is_available() is False" in device["message"]
    assert (
        TOO_OLD in device["message"]
        and "update the host's NVIDIA driver to one for CUDA 12" in device["message"]
    )
    second = tmp_path / "profiler"
    second.mkdir()
    res = run_probe(second, "cuda-build-no-gpu", "profiler", "profiler.tool.nsys", bindir=bindir)
    nsys = res["profiler.tool.nsys"]
    assert (
        nsys["status"] == "skip" and "needs a GPU" in nsys["message"] and TOO_OLD in nsys["message"]
    )


def test_without_nvidia_smi_the_skip_is_unchanged(tmp_path):
    res = run_probe(
        tmp_path, "cuda-build-no-gpu", "smoke", "smoke.device", expect={"backend": "cuda"}
    )
    assert (
        res["smoke.device"]["message"]
        == "cuda image, but torch.cuda.is_available() is False (device: cpu)"
    )
