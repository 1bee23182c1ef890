"""valorch bisect on real images: five tags in order, made with `docker tag` from the local
test images. The first three have torch, the last two do not, so smoke.matmul.fp32 really
goes bad at the fourth; bisect must name it in at most ⌈log₂ 5⌉ + 1 = 4 runs."""

import json
import subprocess
import uuid

import pytest

from tests.conftest import run_cli


@pytest.fixture(scope="module")
def nightlies(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bisect")
    repo = f"valorch/bisect-{uuid.uuid4().hex[:8]}"
    sources = ["valorch/test:pip-torch"] * 3 + ["valorch/base:bookworm"] * 2
    tags = [f"{repo}:n{i}" for i in range(1, 6)]
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
    yield tmp, catalog, [f"nightly_{i}" for i in range(1, 6)]
    subprocess.run(["docker", "rmi", *tags], capture_output=True)  # the tags only: the images stay


def test_bisect_names_the_first_bad_image(nightlies):
    tmp, catalog, aliases = nightlies
    proc = run_cli(
        "bisect",
        "--check",
        "smoke.matmul.fp32",
        "--images",
        *aliases,
        "--catalog",
        str(catalog),
        "--json",
        db=tmp / "b.sqlite",
    )
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found["first_bad"] == "nightly_4" and found["last_good"] == "nightly_3"
    assert found["runs"] <= 4 == found["budget"]
    verdicts = {p["image"]: p["verdict"] for p in found["probes"]}
    assert verdicts["nightly_4"] == "unsupported" and "torch" in next(
        p["message"] for p in found["probes"] if p["image"] == "nightly_4"
    )
    assert all(v == "pass" for img, v in verdicts.items() if img in aliases[:3])
    # the culprit: torch went away between the last good and the first bad image; the check's
    # framework ranks before the other removed packages
    assert (
        found["culprits"][0]["component"] == "pytorch"
        and found["culprits"][0]["change"] == "removed"
    )
    # every probe is a stored run, as `valorch run` would have made it
    runs = json.loads(run_cli("results", "list", "--json", db=tmp / "b.sqlite").stdout)
    assert {r["run"] for r in runs} >= {p["run"] for p in found["probes"]}


def test_bisect_bad_input(nightlies):
    tmp, catalog, aliases = nightlies
    proc = run_cli(
        "bisect",
        "--check",
        "smoke.no_such_check",
        "--images",
        *aliases,
        "--catalog",
        str(catalog),
        db=tmp / "c.sqlite",
    )
    assert proc.returncode == 2 and "unknown check 'smoke.no_such_check'" in proc.stderr
    proc = run_cli(
        "bisect",
        "--check",
        "smoke.matmul.fp32",
        "--images",
        aliases[0],
        "nightly_99",
        "--catalog",
        str(catalog),
        db=tmp / "c.sqlite",
    )
    assert proc.returncode == 2 and "unknown image 'nightly_99'" in proc.stderr
    assert "Traceback" not in proc.stderr
