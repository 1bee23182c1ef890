"""valorch images check against a real registry: the 8 catalogued rocm/pytorch tags, pushed
to the test registry under their names (docker.io mapped to it), drift, --update, vanished."""

import json
import shutil

import pytest
from registry_support import ROOT, registry_basic, registry_token, run_cli, tiny_images  # noqa: F401 (pytest fixtures: requested by name)


def rocm_tags():
    import yaml

    doc = yaml.safe_load((ROOT / "images" / "rocm.yaml").read_text())
    return [(i["alias"], i["reference"].split(":", 1)[1]) for i in doc["images"]]


def hub_env(reg, tmp_path):
    """docker.io served by the test registry: its endpoint, its CA and its credentials."""
    certs = tmp_path / "certs.d" / "docker.io"
    certs.mkdir(parents=True)
    shutil.copy(reg.ca, certs / "ca.crt")
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    auths = json.loads((reg.docker_config / "config.json").read_text())["auths"]
    (cfg / "config.json").write_text(
        json.dumps({"auths": {"docker.io": next(iter(auths.values()))}})
    )
    return {
        "VALORCH_REGISTRY_ENDPOINTS": f"docker.io=https://{reg.host}",
        "VALORCH_CERTS_D": str(tmp_path / "certs.d"),
        "DOCKER_CONFIG": str(cfg),
    }


@pytest.fixture(params=["registry_basic", "registry_token"])
def hub(request, tiny_images, tmp_path):  # noqa: F811 (the parameter is the fixture imported above)
    reg = request.getfixturevalue(request.param)
    digests = {}
    for alias, tag in rocm_tags():
        digests[alias] = reg.push(tiny_images[0], f"rocm/pytorch:{tag}")
    catalog = tmp_path / "images"
    catalog.mkdir()
    shutil.copy(ROOT / "images" / "rocm.yaml", catalog / "rocm.yaml")
    return reg, digests, catalog, hub_env(reg, tmp_path)


def test_drift_update_vanished(hub, tiny_images):  # noqa: F811 (the parameter is the fixture imported above)
    reg, digests, catalog, env = hub
    before = (catalog / "rocm.yaml").read_text()
    # every catalog digest is the public one: all 8 tags moved
    done = run_cli("images", "check", "--catalog", str(catalog), "--json", env=env)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert len(report["images"]) == 8
    assert {c["state"] for c in report["images"]} == {"moved"}
    assert {c["alias"]: c["current_digest"] for c in report["images"]} == digests
    assert (catalog / "rocm.yaml").read_text() == before

    done = run_cli("images", "check", "--catalog", str(catalog), "--update", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count('+    digest: "sha256:') == 8 and "wrote" in done.stderr
    after = (catalog / "rocm.yaml").read_text()
    assert after.splitlines()[0] == before.splitlines()[0]  # comments kept
    assert all(d in after for d in digests.values()) and len(after.splitlines()) == len(
        before.splitlines()
    )
    assert not list(catalog.glob(".*tmp"))

    done = run_cli("images", "check", "--catalog", str(catalog), env=env)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "moved" not in done.stdout and done.stdout.count("same") == 8

    # one tag moves, one vanishes
    aliases = list(digests)
    moved_tag = dict(rocm_tags())[aliases[0]]
    new = reg.push(tiny_images[1], f"rocm/pytorch:{moved_tag}")
    gone = f"rocm/pytorch:{dict(rocm_tags())[aliases[1]]}"
    reg.push(tiny_images[2], gone)  # a manifest of its own: deleting it leaves the other tags
    reg.delete_tag(gone)
    done = run_cli(
        "images",
        "check",
        aliases[0],
        aliases[1],
        aliases[2],
        "--catalog",
        str(catalog),
        "--json",
        env=env,
    )
    assert done.returncode == 1, done.stderr
    states = {
        c["alias"]: (c["state"], c["current_digest"]) for c in json.loads(done.stdout)["images"]
    }
    assert states == {
        aliases[0]: ("moved", new),
        aliases[1]: ("vanished", None),
        aliases[2]: ("same", digests[aliases[2]]),
    }


def test_wrong_password_and_unreachable(registry_basic, tmp_path):  # noqa: F811 (the parameter is the fixture imported above)
    env = hub_env(registry_basic, tmp_path)
    (tmp_path / "cfg" / "config.json").write_text(
        json.dumps({"auths": {"docker.io": {"username": "valorch", "password": "nope"}}})
    )
    env["COLUMNS"] = "1000"  # the image's row holds the reason whole (images check goes on)
    done = run_cli("images", "check", "rocm6.3_py3.12_pytorch_2.4", env=env)
    said = done.stdout + done.stderr
    assert done.returncode == 3
    assert "registry docker.io refused the credentials of user 'valorch'" in said
    assert "docker login docker.io" in said and "Traceback" not in done.stderr
    env["VALORCH_REGISTRY_ENDPOINTS"] = "docker.io=https://127.0.0.1:9"
    done = run_cli("images", "check", "rocm6.3_py3.12_pytorch_2.4", env=env)
    said = done.stdout + done.stderr
    assert (
        done.returncode == 3 and "registry docker.io is unreachable at https://127.0.0.1:9" in said
    )


def test_bad_reference_is_exit_2(tmp_path):
    (tmp_path / "x.yaml").write_text(
        "family: cpu\nbackend: cpu\nimages:\n  - alias: bad\n"
        "    reference: localhost:5000/x@sha256:1234\n"
    )
    done = run_cli("images", "check", "--catalog", str(tmp_path))
    assert done.returncode == 2 and "64 lower-case hex" in done.stderr
