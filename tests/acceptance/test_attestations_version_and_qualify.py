"""valorch attest --version (a published matrix) and --qualify DIR (a SLSA verification
summary beside the test result), through the real CLI, engine and local registry; verify
--require qualified accepts the qualified image and rejects the other."""

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


def statements(path: str) -> list[dict]:
    return [
        json.loads(base64.b64decode(json.loads(line)["payload"]))
        for line in Path(path).read_text().splitlines()
    ]


def test_version_and_qualify_attestations(registry_basic, tmp_path):  # noqa: F811 (the parameter is the fixture imported above)
    reg = registry_basic
    db = tmp_path / "v.sqlite"
    env = {**reg.env(), "VALORCH_DB": str(db)}
    digest = reg.push(SMALL, "attest/q:v1")
    image = f"{reg.host}/attest/q:v1"
    key, pub = tmp_path / "k.pem", tmp_path / "pub.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(key)], check=True)
    subprocess.run(["openssl", "pkey", "-in", str(key), "-pubout", "-out", str(pub)], check=True)
    # a baseline run, published as a matrix version
    p = run_cli(
        "run",
        "--image",
        image,
        "--suite",
        "selftest",
        "--check",
        "selftest.pass",
        "--check",
        "selftest.noise",
        "--no-matrix",
        env=env,
    )
    assert p.returncode == 0, p.stderr
    p = run_cli("matrix", "publish", "--version", "v0.1", "--include-adhoc", env=env)
    assert p.returncode == 0, p.stderr
    p = run_cli(
        "attest",
        "--version",
        "v0.1",
        "--key",
        str(key),
        "--out-dir",
        str(tmp_path / "v"),
        "--json",
        env=env,
    )
    assert p.returncode == 0, p.stderr
    (made,) = json.loads(p.stdout)
    assert made["digest"] == digest
    (stmt,) = statements(made["file"])
    assert stmt["predicate"]["passedTests"] == ["selftest.noise", "selftest.pass"]
    assert stmt["predicate"]["url"] == "valorch:version/v0.1"
    # qualify against it, then attest the qualification: a test result and a VSA, pushed together
    job = tmp_path / "release.yaml"
    job.write_text(
        f"name: release\nimages:\n  - {image}\nsuites:\n  - name: selftest\n"
        "    checks: [selftest.pass, selftest.noise]\n"
    )
    out = tmp_path / "q"
    p = run_cli("qualify", "--job", str(job), "--baseline", "v0.1", "--out-dir", str(out), env=env)
    assert p.returncode == 0, p.stderr
    record = json.loads((out / "qualify.json").read_text())
    assert (
        record["qualified"] is True and record["baseline"] == "v0.1" and record["job"] == "release"
    )
    p = run_cli(
        "attest",
        "--qualify",
        str(out),
        "--key",
        str(key),
        "--out-dir",
        str(tmp_path / "qa"),
        "--push",
        "--json",
        env=env,
    )
    assert p.returncode == 0, p.stderr
    made = json.loads(p.stdout)
    assert [m["predicateType"] for m in made] == [
        "https://in-toto.io/attestation/test-result/v0.1",
        "https://slsa.dev/verification_summary/v1",
    ]
    vsa = statements(made[0]["file"])[1]
    assert vsa["subject"][0]["digest"] == {"sha256": digest.split(":")[1]}
    pred = vsa["predicate"]
    assert (
        pred["verificationResult"] == "PASSED"
        and pred["resourceUri"] == f"{reg.host}/attest/q@{digest}"
    )
    assert "job=release" in pred["policy"]["uri"] and "baseline=v0.1" in pred["policy"]["uri"]
    v = run_cli("verify", "--image", image, "--key", str(pub), "--require", "qualified", env=env)
    assert v.returncode == 0, v.stderr
    # another image, attested from its run only: not qualified
    reg.push("valorch/base:bullseye", "attest/q2:v1")
    image2 = f"{reg.host}/attest/q2:v1"
    p = run_cli(
        "run",
        "--image",
        image2,
        "--suite",
        "selftest",
        "--check",
        "selftest.pass",
        "--no-matrix",
        "--json",
        env=env,
    )
    assert p.returncode == 0, p.stderr
    run2 = next(
        r["run"]
        for r in json.loads(run_cli("results", "list", "--json", env=env).stdout)
        if r["digest"] != digest
    )
    p = run_cli(
        "attest",
        "--run",
        run2,
        "--key",
        str(key),
        "--push",
        "--out-dir",
        str(tmp_path / "r2"),
        env=env,
    )
    assert p.returncode == 0, p.stderr
    v = run_cli("verify", "--image", image2, "--key", str(pub), "--require", "qualified", env=env)
    assert v.returncode == 1 and "no signed verification summary (VSA)" in v.stderr
