"""``valorch run --image REPO:TAG`` runs what the tag names now: the catalogue pins ``v1`` to
one digest, ``v1`` is re-pushed with another image, and the run of the typed tag says that
the tag has moved (naming both digests) and runs the new one. The alias runs the pin, and
with the registry gone the typed tag runs the pin and says why. A real local registry
(Debian's docker-registry) serves the images."""

import json

import pytest
import recipes_support as rs
from root_helpers import run_cli

pytestmark = pytest.mark.docker

OTHER = "valorch/base:bullseye"  # python3 too: the selftest suite runs in it


def _run(image, catalog, db):
    return run_cli(
        "run",
        "--image",
        image,
        "--catalog",
        str(catalog),
        "--suite",
        "selftest",
        "--check",
        "selftest.pass",
        "--json",
        db=db,
    )


def test_a_typed_tag_follows_the_tag_and_says_so(tmp_path):
    proc, registry = rs.serve_registry(tmp_path)
    reference = f"{registry}/team/base:v1"
    repo = reference.rsplit(":", 1)[0]
    pinned = rs.push(rs.SMALL, reference)
    catalog = tmp_path / "images"
    catalog.mkdir()
    (catalog / "team.yaml").write_text(
        f"family: team\nbackend: cpu\nimages:\n  - alias: team_base_v1\n"
        f'    reference: {reference}\n    digest: "{pinned}"\n'
    )
    db = tmp_path / "v.sqlite"
    moved = ""
    try:
        moved = rs.push(OTHER, reference)
        assert moved != pinned

        typed = _run(reference, catalog, db)
        assert typed.returncode == 0, typed.stderr
        assert f"the tag has moved: it names {moved} now" in typed.stderr
        assert f"the catalogue pins {pinned} (team_base_v1); running {moved}" in typed.stderr
        (run,) = json.loads(typed.stdout)
        assert (run["image"]["alias"], run["image"]["digest"]) == ("team_base_v1", moved)

        alias = _run("team_base_v1", catalog, db)  # the alias runs the pin, without a word
        assert alias.returncode == 0, alias.stderr
        assert "tag has moved" not in alias.stderr
        assert json.loads(alias.stdout)[0]["image"]["digest"] == pinned

        proc.terminate()
        proc.wait(timeout=30)
        gone = _run(reference, catalog, db)  # the pin is on the engine: it runs, and says why
        assert gone.returncode == 0, gone.stderr
        assert "could not learn what the tag names now" in gone.stderr
        assert f"running the catalogue's pin {pinned} (team_base_v1)" in gone.stderr
        assert json.loads(gone.stdout)[0]["image"]["digest"] == pinned
    finally:
        for digest in (pinned, moved):
            if digest:
                rs.forget(f"{repo}@{digest}")
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=30)
