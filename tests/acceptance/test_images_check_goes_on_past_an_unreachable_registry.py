"""``images check`` reports a registry that does not answer on the images it holds
(``unreachable``, with the reason) and checks every other image: a moved and a vanished tag
on a registry that answers are still shown, and decide the exit (1). With only the
unreachable image left, the exit is 3 and the reason counts what was not reached. The hint
names no option ``images check`` does not have."""

import json

import pytest
import recipes_support as rs
from root_helpers import run_cli

pytestmark = pytest.mark.docker

OTHER = "sha256:" + "1" * 64


@pytest.fixture
def catalog(tmp_path):
    proc, registry = rs.serve_registry(tmp_path)
    rs.push(rs.SMALL, f"{registry}/team/base:v1")
    dead = f"127.0.0.1:{rs.free_port()}"  # nothing listens there
    d = tmp_path / "images"
    d.mkdir()
    (d / "team.yaml").write_text(
        "family: team\nbackend: cpu\nimages:\n"
        f'  - alias: team_base_v1\n    reference: {registry}/team/base:v1\n    digest: "{OTHER}"\n'
        f'  - alias: team_ghost\n    reference: {registry}/team/ghost:v1\n    digest: "{OTHER}"\n'
        f'  - alias: team_far\n    reference: {dead}/team/far:v1\n    digest: "{OTHER}"\n'
    )
    yield d
    proc.terminate()
    proc.wait(timeout=30)


def _check(catalog, *args):
    env = {"VALORCH_REGISTRY_ENDPOINTS": "", "DOCKER_CONFIG": str(catalog / "no-config")}
    return run_cli("images", "check", *args, "--catalog", str(catalog), "--timeout", "5", env=env)


def test_every_image_is_reported_and_the_drift_decides(catalog):
    done = _check(catalog, "family:team", "--json")
    assert done.returncode == 1, done.stderr
    states = {c["alias"]: c for c in json.loads(done.stdout)["images"]}
    assert {a: c["state"] for a, c in states.items()} == {
        "team_base_v1": "moved",
        "team_ghost": "vanished",
        "team_far": "unreachable",
    }
    assert "unreachable" in states["team_far"]["message"]
    assert "or run with --pull never" not in states["team_far"]["message"]  # not an option here
    table = _check(catalog, "family:team")
    assert table.returncode == 1
    for word in ("moved", "vanished", "unreachable"):
        assert word in table.stdout, table.stdout
    assert "registry not reached for team_far" in table.stderr


def test_only_unreachable_is_exit_3_counting_what_was_not_reached(catalog):
    done = _check(catalog, "team_far")
    assert done.returncode == 3, done.stderr
    assert "unreachable" in done.stdout
    assert "registry not reached for 1 of 1 image: team_far" in done.stderr
    assert "Traceback" not in done.stderr
