"""A GPU row on a CPU image is n/a (blank, counted nowhere); a row whose package the image
does not have is ``unsupported`` (⊘) on every image, GPU row or not: "torchvision is not
importable" is no GPU row (docs/statuses.md). Run on the host interpreter, which has torch
and no torchvision."""

from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.cli, pytest.mark.torch]


def test_a_missing_torchvision_is_unsupported_and_a_gpu_row_is_na(cli):
    pytest.importorskip("torch")
    try:
        import torchvision  # noqa: F401

        pytest.skip("torchvision is installed here")
    except ImportError:
        pass
    proc = cli(
        "run",
        "--image",
        "host",
        "--suite",
        "features",
        "--check",
        "features.torchvision.*",
        "--check",
        "features.cuda.tunableop",
        "--json",
        "--no-gate",
        "--allow-empty",  # nothing here runs to a verdict: that is the point
    )
    assert proc.returncode == 0, proc.stderr
    (run,) = json.loads(proc.stdout)
    got = {r["check"]: r for r in run["results"]}
    for check in ("features.torchvision.ops", "features.torchvision.io"):
        assert got[check]["status"] == "unsupported", got[check]
        assert "not installed" in got[check]["message"] and "GPU row" not in got[check]["message"]
    tunable = got["features.cuda.tunableop"]
    assert tunable["status"] == "n/a", tunable
    assert tunable["message"].startswith("not applicable: a GPU row on a CPU image: ")
    assert "))" not in tunable["message"]
    matrix = cli("matrix", "render", "--job", run["job"], "--format", "json")
    assert matrix.returncode == 0, matrix.stderr
    assert "unsupported" in matrix.stdout
