"""The vfmath image pair (scripts/build-test-images.sh: valorch/test:culprit-good has vfmath 1.0,
culprit-bad a broken 1.1) and a job whose command check computes a dot product with it."""

import subprocess

import pytest

GOOD, BAD = "valorch/test:culprit-good", "valorch/test:culprit-bad"


def need_images() -> None:
    for image in (GOOD, BAD):
        if (
            subprocess.run(["docker", "image", "inspect", image], capture_output=True).returncode
            != 0
        ):
            pytest.fail(f"{image} is missing: build the test images (make test-images)")


def job(name: str, image: str, extra: str = "") -> str:
    """A job running ``command.vfmath-dot`` (passes with vfmath 1.0, fails with 1.1) in ``image``."""
    return (
        f"name: {name}\nimages: [{image}]\nsuites:\n  - name: command\n    commands:\n"
        "      - id: vfmath-dot\n"
        "        argv: [python3, -c, \"import vfmath; print('dot', vfmath.dot([1, 2, 3], [4, 5, 6]))\"]\n"
        "        stdout: ['^dot 32$']\n        feature: vfmath dot product\n" + extra
    )
