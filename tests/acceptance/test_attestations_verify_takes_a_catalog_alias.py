"""`valorch verify --image ALIAS` names what every other command names by that alias: the
catalogued image, by its pinned digest, in its own registry (through the real CLI, engine and
local registry). The tag is re-pushed with another image after the attestation: the alias
still verifies the pinned digest, while the moved tag has no attestation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from registry_support import SMALL, registry_basic, run_cli  # noqa: F401 (pytest fixtures: requested by name)

pytestmark = pytest.mark.docker

OTHER = "valorch/base:bullseye"


def test_verify_resolves_a_catalog_alias_to_its_pinned_digest(registry_basic, tmp_path):  # noqa: F811
    reg = registry_basic
    digest = reg.push(SMALL, "alias/base:v1")
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "team.yaml").write_text(
        "family: team\nbackend: cpu\nimages:\n"
        f"  - alias: team_base_v1\n    reference: {reg.host}/alias/base:v1\n"
        f'    digest: "{digest}"\n'
    )
    env = {**reg.env(), "VALORCH_DB": str(tmp_path / "v.sqlite")}
    key, pub = tmp_path / "k.pem", tmp_path / "pub.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(key)], check=True)
    subprocess.run(["openssl", "pkey", "-in", str(key), "-pubout", "-out", str(pub)], check=True)

    def cli(*args: str) -> subprocess.CompletedProcess:
        return run_cli(*args, env=env, cwd=tmp_path)

    p = cli("run", "--image", "team_base_v1", "--suite", "selftest", "--check", "selftest.pass",
            "--no-matrix", "--json")  # fmt: skip
    assert p.returncode == 0, p.stderr
    run = json.loads(p.stdout)[0]["run"]
    p = cli("attest", "--run", run, "--key", str(key), "--push", "--out-dir", str(tmp_path / "a"))
    assert p.returncode == 0, p.stderr
    reg.push(OTHER, "alias/base:v1")  # the tag moves; the catalog still pins the digest

    p = cli("verify", "--image", "team_base_v1", "--key", str(pub), "--require", "passed")
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"{reg.host}/alias/base@{digest}" in p.stdout, p.stdout
    # the moved tag names another digest, with no attestation of its own
    p = cli("verify", "--image", f"{reg.host}/alias/base:v1", "--key", str(pub))
    assert p.returncode == 2 and "has no attestations" in p.stderr, p.stdout + p.stderr
