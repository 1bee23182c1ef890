"""An image without PyTorch, and a command whose program is not installed: those checks are
``unsupported``, which is never a failure of the image. The in-toto test-result predicate
lists them nowhere and its result is PASSED, not FAILED (docs/statuses.md), through the real
CLI, engine and local registry."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from registry_support import SMALL, registry_basic, run_cli  # noqa: F401 (pytest fixtures: requested by name)

pytestmark = pytest.mark.docker


def test_unsupported_checks_do_not_fail_the_attestation(registry_basic, tmp_path):  # noqa: F811 (the fixture imported above)
    reg = registry_basic
    env = {**reg.env(), "VALORCH_DB": str(tmp_path / "v.sqlite")}
    reg.push(SMALL, "attest/unsupported:v1")
    image = f"{reg.host}/attest/unsupported:v1"
    key = tmp_path / "k.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(key)], check=True)
    job = tmp_path / "release.yaml"
    job.write_text(
        f"name: release\nimages:\n  - {image}\nsuites:\n"
        "  - name: smoke\n    checks: [smoke.matmul.fp32]\n"
        "  - name: command\n    commands:\n"
        "      - {id: ok, argv: [python3, -c, pass]}\n"
        "      - {id: missing-tool, argv: [valorch-no-such-tool-here]}\n"
    )
    p = run_cli("run", "--job", str(job), "--no-matrix", env=env)
    assert p.returncode == 0, p.stderr
    (run,) = json.loads(run_cli("results", "list", "--json", env=env).stdout)
    p = run_cli(
        "attest",
        "--run",
        run["run"],
        "--key",
        str(key),
        "--out-dir",
        str(tmp_path / "a"),
        "--json",
        env=env,
    )
    assert p.returncode == 0, p.stderr
    (made,) = json.loads(p.stdout)
    (line,) = Path(made["file"]).read_text().splitlines()
    predicate = json.loads(base64.b64decode(json.loads(line)["payload"]))["predicate"]
    assert predicate["result"] == "PASSED", predicate
    assert predicate["failedTests"] == [] and predicate["passedTests"] == ["command.ok"]
    listed = {*predicate["passedTests"], *predicate["warnedTests"], *predicate["failedTests"]}
    assert not listed & {"smoke.matmul.fp32", "command.missing-tool"}
