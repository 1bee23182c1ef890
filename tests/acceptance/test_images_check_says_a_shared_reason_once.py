"""``images check`` over many images of one registry that does not answer says why once,
under the table, with how many images it holds for; each row points at it. One image's
reason stays in its row. A real refused connection (a port nothing listens on)."""

from __future__ import annotations

import json

from root_helpers import run_cli

PIN = "sha256:" + "1" * 64


def _catalog(tmp_path, refs):
    d = tmp_path / "images"
    d.mkdir()
    (d / "team.yaml").write_text(
        "family: team\nbackend: cpu\nimages:\n"
        + "".join(
            f'  - alias: team_{i}\n    reference: {ref}\n    digest: "{PIN}"\n'
            for i, ref in enumerate(refs)
        )
    )
    return d


def _check(catalog, *args):
    env = {"VALORCH_REGISTRY_ENDPOINTS": "", "DOCKER_CONFIG": str(catalog / "no-config")}
    return run_cli(
        "images", "check", "family:team", *args, "--catalog", str(catalog), "--timeout", "5",
        env={**env, "COLUMNS": "200"},
    )  # fmt: skip


def test_one_registry_down_is_said_once_for_all_its_images(tmp_path):
    catalog = _catalog(tmp_path, [f"127.0.0.1:9/team/img{i}:v1" for i in range(4)])
    done = _check(catalog)
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stdout.count("is unreachable") == 1, done.stdout
    assert done.stdout.count("[1] below") == 4
    assert "[1] (4 images) registry 127.0.0.1:9 is unreachable" in done.stdout
    # --json keeps each image's whole reason
    listed = json.loads(_check(catalog, "--json").stdout)["images"]
    assert all("127.0.0.1:9 is unreachable" in c["message"] for c in listed)


def test_a_reason_of_one_image_stays_in_its_row(tmp_path):
    done = _check(_catalog(tmp_path, ["127.0.0.1:9/team/only:v1"]))
    assert done.returncode == 3
    assert "below" not in done.stdout and "is unreachable" in done.stdout
