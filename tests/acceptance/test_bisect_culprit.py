"""valorch bisect names the culprit: four nightlies in order, the first two valorch/test:culprit-good
(vfmath 1.0) and the last two valorch/test:culprit-bad (vfmath 1.1, whose dot product drops a
term), built by scripts/build-test-images.sh. A job's command check computes a dot product with
vfmath; bisect must name the third image, diff the inventories of the last good and the first
bad image, and put vfmath, the one component that changed, first."""

import json
import subprocess
import uuid

import pytest
from vfmath_support import BAD, GOOD, job, need_images

from tests.conftest import run_cli

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def nightlies(tmp_path_factory):
    need_images()
    tmp = tmp_path_factory.mktemp("culprit")
    repo = f"valorch/culprit-{uuid.uuid4().hex[:8]}"
    sources = [GOOD] * 2 + [BAD] * 2
    tags = [f"{repo}:n{i}" for i in range(1, 5)]
    for src, tag in zip(sources, tags, strict=False):
        subprocess.run(["docker", "tag", src, tag], check=True, capture_output=True)
    catalog = tmp / "images"
    catalog.mkdir()
    entries = "".join(
        f"  - alias: nightly_{i}\n    reference: {t}\n" for i, t in enumerate(tags, 1)
    )
    (catalog / "nightly.yaml").write_text(
        f"family: nightly\nbackend: cpu\nlocal: true\nimages:\n{entries}"
    )
    (tmp / "job.yaml").write_text(job("vfmath", "nightly_1"))
    yield tmp, catalog, [f"nightly_{i}" for i in range(1, 5)]
    subprocess.run(["docker", "rmi", *tags], capture_output=True)  # the tags only: the images stay


def test_bisect_ranks_the_changed_component_first(nightlies):
    tmp, catalog, aliases = nightlies
    args = [
        "bisect",
        "--check",
        "command.vfmath-dot",
        "--job",
        str(tmp / "job.yaml"),
        "--images",
        *aliases,
        "--catalog",
        str(catalog),
    ]
    proc = run_cli(*args, "--json", db=tmp / "b.sqlite")
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found["first_bad"] == "nightly_3" and found["last_good"] == "nightly_2"
    assert found["runs"] <= found["budget"] == 3
    assert (
        "inventory diff nightly_2" in found["culprit_note"] and "nightly_3" in found["culprit_note"]
    )
    # the images differ in one component: it is named, with its versions, as the check's own
    assert found["culprits"] == [
        {
            "rank": 1,
            "component": "pip:vfmath",
            "change": "changed",
            "old": "1.0",
            "new": "1.1",
            "tier": "library",
            "why": "named by the check (vfmath)",
        }
    ]
    # the text report says the same
    text = run_cli(*args, db=tmp / "b.sqlite")
    assert text.returncode == 0, text.stderr
    assert "went bad in nightly_3" in text.stdout
    assert "1. [library] pip:vfmath: 1.0 -> 1.1  (named by the check (vfmath))" in text.stdout


def test_bisect_where_every_image_is_good_is_bad_input(nightlies):
    tmp, catalog, aliases = nightlies
    proc = run_cli(
        "bisect",
        "--check",
        "command.vfmath-dot",
        "--job",
        str(tmp / "job.yaml"),
        "--images",
        *aliases[:2],
        "--catalog",
        str(catalog),
        db=tmp / "g.sqlite",
    )
    assert proc.returncode == 2, proc.stderr
    assert (
        "passes in the last image nightly_2" in proc.stderr and "every image is good" in proc.stderr
    )
    assert "Traceback" not in proc.stderr
