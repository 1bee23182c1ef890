"""bisect over CPU images names what a CPU image runs on: smoke.matmul.fp32 passes with
PyTorch 2.13 and 1.13 and is unsupported in the Debian image without a framework. The
culprit is PyTorch's removal, first; no GPU library (hipBLAS) is blamed for a CPU image."""

import json
import subprocess

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.docker
IMAGES = (
    "cpu_debian12_py3.11_pytorch_2.13",
    "cpu_debian12_py3.11_pytorch_1.13",
    "cpu_debian12_py3.11",
)


def test_bisect_on_cpu_images_ranks_the_removed_framework_first(tmp_path):
    for ref in ("valorch/test:pip-torch", "valorch/test:debian-torch", "valorch/base:bookworm"):
        if subprocess.run(["docker", "image", "inspect", ref], capture_output=True).returncode:
            pytest.skip(f"{ref} is not built (make test-images)")
    proc = run_cli(
        "bisect",
        "--check",
        "smoke.matmul.fp32",
        "--images",
        *IMAGES,
        "--json",
        db=tmp_path / "b.sqlite",
    )
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found["first_bad"] == "cpu_debian12_py3.11", found
    culprits = found["culprits"]
    assert culprits and culprits[0]["change"] == "removed", culprits[:3]
    assert culprits[0]["component"] in ("pytorch", "pip:torch", "deb:python3-torch"), culprits[:3]
    assert not any("hipblas" in c["why"].lower() for c in culprits), culprits
