"""Attestations name what a registry serves and are checked with what a verifier holds:
``attest`` of a run of a local image (built here, never pushed, so the digest recorded is
the engine's image id) is exit 2 saying so, before anything is signed or written; ``verify``
refuses a private key (a verifier never needs the signing key), naming the command that
derives the public one."""

import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from root_helpers import run_cli

pytestmark = pytest.mark.docker

LOCAL = "valorch/base:bookworm"  # built by make test-images: never pulled from a registry


@pytest.fixture
def key(tmp_path):
    private = ec.generate_private_key(ec.SECP256R1())
    path = tmp_path / "valorch.key"
    path.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return path


def test_attest_of_a_never_pushed_image_is_refused(tmp_path, key):
    db = tmp_path / "v.sqlite"
    ran = run_cli(
        "run",
        "--image",
        LOCAL,
        "--suite",
        "selftest",
        "--check",
        "selftest.pass",
        "--no-matrix",
        "--json",
        db=db,
    )
    assert ran.returncode == 0, ran.stderr
    run_id = json.loads(ran.stdout)[0]["run"]
    out = tmp_path / "attestations"
    done = run_cli("attest", "--run", run_id, "--key", str(key), "--out-dir", str(out), db=db)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "image id" in done.stderr and "never pushed" in done.stderr
    assert "docker push" in done.stderr
    assert not out.exists() or not any(out.iterdir())


def test_verify_refuses_a_private_key(tmp_path, key):
    done = run_cli(
        "verify",
        "--image",
        "127.0.0.1:5999/hb/pytorch:rc1",
        "--key",
        str(key),
        db=tmp_path / "v.sqlite",
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is a private key" in done.stderr and "-pubout" in done.stderr
