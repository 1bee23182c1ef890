"""``hosts check`` checks what the run will use: an image the catalog pins by digest is
ready when the engine holds that digest, even with its tag gone (``run --pull never`` runs
it), and missing when it holds neither, the problem naming the pinned digest and the pull
that brings it. A local registry serves the image; the engine never held it before."""

import json
import subprocess

import pytest
import recipes_support as rs
from root_helpers import run_cli

pytestmark = pytest.mark.docker


@pytest.fixture
def pinned_catalog(tmp_path):
    proc, registry = rs.serve_registry(tmp_path)
    reference = f"{registry}/hb/base:v1"
    digest = rs.push(rs.SMALL, reference)
    catalog = tmp_path / "images"
    catalog.mkdir()
    (catalog / "team.yaml").write_text(
        f"family: team\nbackend: cpu\nimages:\n  - alias: team_base_v1\n"
        f'    reference: {reference}\n    digest: "{digest}"\n'
    )
    try:
        yield catalog, reference, f"{registry}/hb/base@{digest}"
    finally:
        rs.forget(f"{registry}/hb/base@{digest}")
        rs.forget(reference)
        proc.terminate()
        proc.wait(timeout=30)


def _check(catalog, db):
    return run_cli(
        "hosts", "check", "--image", "team_base_v1", "--catalog", str(catalog), "--json", db=db
    )


def test_present_by_digest_without_its_tag_is_ready(pinned_catalog, tmp_path):
    catalog, reference, pinned = pinned_catalog
    db = tmp_path / "v.sqlite"
    before = _check(catalog, db)
    assert before.returncode == 3, before.stderr  # a fresh engine: not there yet
    (host,) = json.loads(before.stdout)["hosts"]
    assert host["images"] == {reference: "missing"}
    assert any(pinned.split("@")[1] in p and "images pull" in p for p in host["problems"])

    pulled = run_cli("images", "pull", "team_base_v1", "--catalog", str(catalog), db=db)
    assert pulled.returncode == 0, pulled.stderr
    subprocess.run(["docker", "rmi", reference], capture_output=True)  # the tag only
    assert (
        subprocess.run(["docker", "image", "inspect", pinned], capture_output=True).returncode == 0
    )

    after = _check(catalog, db)
    assert after.returncode == 0, after.stdout + after.stderr
    (host,) = json.loads(after.stdout)["hosts"]
    assert host["images"] == {reference: "ok"} and not host["problems"]
    ran = run_cli(
        "run",
        "--image",
        "team_base_v1",
        "--catalog",
        str(catalog),
        "--pull",
        "never",
        "--suite",
        "selftest",
        "--check",
        "selftest.pass",
        "--no-matrix",
        db=db,
    )
    assert ran.returncode == 0, ran.stderr  # what the preflight called ready runs
