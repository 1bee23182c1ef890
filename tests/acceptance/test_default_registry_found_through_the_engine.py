"""The registry a reference names by default (written without a registry, as the shipped
catalog's rocm/pytorch images are) is served from another host than its name. valorch asks
the Docker engine where it reaches it, as ``docker pull`` does: the engine's registry mirrors
first, then its index address. Here a private engine has a mirror on loopback (Debian's
docker-registry, plain HTTP), and ``images check`` of a catalog entry written without a
registry resolves its digest there, with no VALORCH_REGISTRY_ENDPOINTS."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import dockerd
import pytest
from root_helpers import run_cli
from test_registries_as_docker_treats_them import SMALL, _catalog, _push, _serve

pytestmark = pytest.mark.docker

DIR = Path("/tmp/valorch-hub-engine")
BRIDGE = "vlch-hub-br0"


@pytest.fixture
def engine_with_mirror(tmp_path):
    proc, mirror = _serve(tmp_path, "127.0.0.1")
    dockerd.stop_stale(DIR)
    try:
        with dockerd.running(DIR, BRIDGE, "--registry-mirror", f"http://{mirror}") as sock:
            yield mirror, sock
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_images_check_resolves_a_default_registry_reference_through_the_engines_mirror(
    tmp_path, engine_with_mirror
):
    mirror, sock = engine_with_mirror
    name = f"hubtest-{uuid.uuid4().hex[:8]}"
    digest = _push(SMALL, f"{mirror}/library/{name}:v1")  # what the mirror serves for it
    catalog = _catalog(tmp_path, "hub_v1", f"{name}:v1", digest)  # no registry written
    env = {
        "DOCKER_HOST": f"unix://{sock}",  # the engine valorch asks, as the docker CLI would
        "DOCKER_CONFIG": str(tmp_path / "no-docker-config"),
        "VALORCH_REGISTRY_ENDPOINTS": "",
    }
    done = run_cli("images", "check", "--catalog", str(catalog), "--json", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    (found,) = json.loads(done.stdout)["images"]
    assert found["state"] == "same" and found["current_digest"] == digest, found


def test_without_a_mirror_the_engines_index_is_asked_and_named(tmp_path):
    """Without a mirror, the engine's index address is asked. Where the machine cannot reach
    it (the test machine reaches no registry on the internet) the error says that the engine
    was asked and how to name a mirror instead; where it can, the made-up name is not there."""
    catalog = _catalog(tmp_path, "nowhere", f"valorch-none-{uuid.uuid4().hex[:8]}:v1")
    env = {"VALORCH_REGISTRY_ENDPOINTS": "", "DOCKER_CONFIG": str(tmp_path / "none")}
    done = run_cli(
        "images", "check", "--catalog", str(catalog), "--timeout", "5", "--json", env=env
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    (found,) = json.loads(done.stdout)["images"]
    if done.returncode == 3:
        assert found["state"] == "unreachable", found
        said = found["message"]
        assert "Docker engine reaches it" in said and "VALORCH_REGISTRY_ENDPOINTS=" in said, said
    else:
        assert done.returncode == 1 and found["state"] != "same", found
