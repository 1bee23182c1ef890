"""attest --push and verify against the local registry with bearer-token auth (the flow of
Docker Hub, GHCR, Harbor): the push asks the token service for a pull,push scope."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from registry_support import SMALL, registry_token, run_cli  # noqa: F401 (pytest fixtures: requested by name)

pytestmark = pytest.mark.docker


def test_push_and_verify_through_token_auth(registry_token, tmp_path):  # noqa: F811 (the parameter is the fixture imported above)
    reg = registry_token
    env = {**reg.env(), "VALORCH_DB": str(tmp_path / "v.sqlite")}
    digest = reg.push(SMALL, "attest/tok:v1")
    image = f"{reg.host}/attest/tok:v1"
    key, pub = tmp_path / "k.pem", tmp_path / "pub.pem"
    subprocess.run(
        [
            "openssl",
            "genpkey",
            "-algorithm",
            "EC",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-out",
            str(key),
        ],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        ["openssl", "pkey", "-in", str(key), "-pubout", "-out", str(pub)],
        check=True,
        capture_output=True,
    )
    p = run_cli(
        "run",
        "--image",
        image,
        "--suite",
        "selftest",
        "--check",
        "selftest.pass",
        "--no-matrix",
        env=env,
    )
    assert p.returncode == 0, p.stderr
    (run,) = json.loads(run_cli("results", "list", "--json", env=env).stdout)
    assert run["digest"] == digest
    p = run_cli(
        "attest",
        "--run",
        run["run"],
        "--key",
        str(key),
        "--push",
        "--out-dir",
        str(tmp_path / "a"),
        "--json",
        env=env,
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)[0]["pushed"].endswith(digest.replace(":", "-") + ".att")
    v = run_cli(
        "verify", "--image", image, "--key", str(pub), "--require", "passed:selftest.pass", env=env
    )
    assert v.returncode == 0, v.stderr
    # without credentials the registry refuses: exit 3, not a failed verification
    nocreds = tmp_path / "empty-config"
    nocreds.mkdir()
    v = run_cli(
        "verify", "--image", image, "--key", str(pub), env={**env, "DOCKER_CONFIG": str(nocreds)}
    )
    assert v.returncode == 3, v.stderr
