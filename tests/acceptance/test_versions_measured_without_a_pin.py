"""A version row measures what is installed even when the catalog pins nothing: on
``--image host`` (the local interpreter, no catalog expectations) ``env.version.pytorch``
passes and says the version found, and its matrix cell shows it; a package neither installed
nor pinned stays skip."""

import json


def test_unpinned_versions_are_measured(cli):
    import torch

    proc = cli(
        "run",
        "--image",
        "host",
        "--suite",
        "smoke",
        "--check",
        "env.version.pytorch",
        "--check",
        "env.version.python",
        "--check",
        "env.version.apex",
        "--no-gate",
        "--no-matrix",
    )
    assert proc.returncode == 0, proc.stderr
    runs = json.loads(cli("results", "list", "--json").stdout)
    data = json.loads(cli("results", "show", runs[0]["run"], "--json").stdout)
    by_check = {r["check"]: r for r in data["results"]}
    pytorch = by_check["env.version.pytorch"]
    assert pytorch["status"] == "pass", pytorch
    assert torch.__version__ in pytorch["message"] and "pins no version" in pytorch["message"]
    assert by_check["env.version.python"]["status"] == "pass"
    apex = by_check["env.version.apex"]
    assert apex["status"] == "skip" and "not found" in apex["message"]
    matrix = cli("matrix", "render").stdout
    row = next(line for line in matrix.splitlines() if "`env.version.pytorch`" in line)
    assert f"✅ {torch.__version__}" in row  # the cell shows the version it measured
