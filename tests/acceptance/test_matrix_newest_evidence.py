"""A matrix cell is the newest evidence of its check in its environment (image on a host
class), dated; narrower runs never erase rows; which runs feed which matrix.

The examples of "The matrix replaces the seed pages", section 1, through the real CLI on
the local interpreter (`--image host`) and, where marked, the real Docker engine."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import ROOT, run_cli
from root_helpers import FAKE_ROCM, ensure_fake_rocm


def rows(db, *args) -> int:
    """`valorch matrix render --format md | grep -c '^|'`: the rows a reader counts."""
    proc = run_cli("matrix", "render", "--format", "md", *args, db=db)
    assert proc.returncode == 0, proc.stderr
    return sum(1 for line in proc.stdout.splitlines() if line.startswith("|"))


def doc(db, *args) -> dict:
    proc = run_cli("matrix", "render", "--format", "json", *args, db=db)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def cells(d: dict) -> dict[tuple[str, str], dict]:
    return {(r["key"], col): c for r in d["rows"] for col, c in r["cells"].items()}


def ok(*args, db):
    proc = run_cli(*args, db=db)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc


def run(db, *args):
    """`valorch run ARGS --no-matrix --no-gate`: the results stored, no matrix, no gate."""
    return ok("run", *args, "--no-matrix", "--no-gate", db=db)


def on_host(db, *args):
    """A run on the local interpreter (`--image host`)."""
    return run(db, "--image", "host", *args)


MATMUL = ("--suite", "smoke", "--check", "smoke.matmul*")  # a narrow run: one suite's matmuls


@pytest.fixture
def db(tmp_path):
    return f"sqlite:///{tmp_path / 'a.sqlite'}"


@pytest.fixture
def broad(db):
    """A store holding a broad run (smoke and features on the host); its row count."""
    on_host(db, "--suite", "smoke", "--suite", "features")
    return rows(db)


def test_a_narrow_run_keeps_the_rows_measured_before(db, broad):
    assert broad > 50
    on_host(db, *MATMUL)
    assert rows(db) == broad  # was 3: ninety rows measured a minute ago were gone
    d = doc(db)
    by = cells(d)
    runs = {c["runs"][0] for c in by.values() if c["runs"]}
    assert len(runs) == 2  # matmul from the narrow run, everything else from the run before
    matmul = [c for (row, _), c in by.items() if row.startswith("smoke.matmul")]
    other = [c for (row, _), c in by.items() if row.startswith("features.")]
    assert (
        matmul
        and other
        and {c["runs"][0] for c in matmul}.isdisjoint({c["runs"][0] for c in other})
    )
    assert all(c["when"] for c in by.values() if c["verdict"] not in ("", "missing", "skip"))


def test_a_repeat_of_one_suite_keeps_the_other_suites_rows(db, broad):
    on_host(db, "--suite", "smoke", "--repeat", "3")
    assert rows(db) == broad  # was 115 → 22


def _age(db: str, days: int) -> None:
    """Move every stored run `days` into the past (the store's own clock, as if measured then)."""
    path = db.removeprefix("sqlite:///")
    with sqlite3.connect(path) as con:
        for col in ("started", "ended"):
            con.execute(f"UPDATE run SET {col} = datetime({col}, ?)", (f"-{days} days",))


def test_cells_carry_their_date_and_old_evidence_looks_stale(db):
    on_host(db, "--suite", "smoke")
    _age(db, 30)
    on_host(db, *MATMUL)
    d = doc(db)
    dated = [c for c in cells(d).values() if c["when"]]
    stale = [c for c in dated if "stale" in c["flags"]]
    fresh = [c for c in dated if "stale" not in c["flags"]]
    assert stale and fresh and d["stale_cells"] == len(stale)
    assert all("stale" in c["text"] and c["when"] in c["text"] for c in stale)
    md = run_cli("matrix", "render", "--format", "md", db=db).stdout
    assert f"freshness: {len(stale)} of {len(dated)} dated cells older than 7 days" in md
    assert doc(db, "--fresh-days", "60")["stale_cells"] == 0
    # a published version keeps the stale marks: a release never shows an old verdict as today's
    ok("matrix", "publish", "--version", "v-stale", "--job", "adhoc", db=db)
    published = run_cli("matrix", "render", "--version", "v-stale", "--format", "md", db=db).stdout
    assert published.count("stale: ") == len(stale)
    html = run_cli("matrix", "render", "--format", "html", db=db).stdout
    assert "stale: " in html


@pytest.mark.parametrize("value", ["0", "-3"])
def test_a_freshness_window_under_one_day_is_bad_input(db, value):
    on_host(db, *MATMUL)
    proc = run_cli("matrix", "render", "--fresh-days", value, db=db)
    assert proc.returncode == 2 and "--fresh-days" in proc.stderr and "Traceback" not in proc.stderr


def _named_job(tmp_path: Path, name: str, suite: str) -> Path:
    job = tmp_path / f"{name}.yaml"
    job.write_text(f"name: {name}\nimages: [host]\nsuites:\n  - name: {suite}\n")
    return job


def test_named_jobs_feed_the_matrix_and_ad_hoc_runs_only_when_asked(db, tmp_path):
    run(db, "--job", str(_named_job(tmp_path, "nightly", "smoke")))
    on_host(db, "--suite", "compile")  # ad hoc
    default = doc(db)
    keys = {r["key"] for r in default["rows"]}
    assert keys and all(k.startswith(("smoke.", "env.")) for k in keys), keys
    assert any("ad-hoc" in s and "left out" in s for s in default["source_of_truth"])
    asked = {r["key"] for r in doc(db, "--include-adhoc")["rows"]}
    assert any(k.startswith("compile.") for k in asked) and keys <= asked
    adhoc = {r["key"] for r in doc(db, "--job", "adhoc")["rows"]}
    assert adhoc and all(k.startswith(("compile.", "env.")) for k in adhoc)
    # published matrices, tiers and the summary take named jobs only
    ok("matrix", "publish", "--version", "v1", db=db)
    published = json.loads(
        run_cli("matrix", "render", "--version", "v1", "--format", "json", db=db).stdout
    )
    assert {r["key"] for r in published["rows"]} == keys
    named_runs = {r for c in cells(default).values() for r in c["runs"]}
    tiers = doc(db, "--layout", "tiers")
    assert tiers["rows"] and {r for c in cells(tiers).values() for r in c["runs"]} == named_runs
    assert any("left out" in s for s in tiers["source_of_truth"])


def test_tiers_and_publish_refuse_ad_hoc_runs_alone(db):
    on_host(db, "--suite", "smoke")
    for args in (
        ("matrix", "render", "--layout", "tiers"),
        ("matrix", "render", "--layout", "summary"),
        ("matrix", "publish", "--version", "v9"),
    ):
        proc = run_cli(*args, db=db)
        assert proc.returncode == 2 and "--include-adhoc" in proc.stderr, (args, proc.stderr)
    assert (
        run_cli("matrix", "render", "--layout", "tiers", "--include-adhoc", db=db).returncode == 0
    )


# --- the real engine: a GPU image run --cpu-only, a bisect, a new digest ---


def _docker_ready(*images: str) -> None:
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        pytest.fail("no Docker engine answers: run scripts/ensure-engine.sh (make test does)")
    for image in images:
        if (
            subprocess.run(["docker", "image", "inspect", image], capture_output=True).returncode
            != 0
        ):
            if image == FAKE_ROCM:
                ensure_fake_rocm()
            else:
                pytest.fail(f"test image {image} missing: run make test-images")


@pytest.mark.docker
def test_a_cpu_only_run_of_a_gpu_image_is_never_a_gpu_pass(db, tmp_path):
    _docker_ready(FAKE_ROCM, "valorch/test:pip-torch")
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "t.yaml").write_text(
        "family: t\nbackend: cpu\nlocal: true\nimages:\n"
        "  - alias: cpu_img\n    reference: valorch/test:pip-torch\n"
        "  - alias: fake_rocm6.3\n    reference: valorch/test:fake-rocm\n    backend: rocm\n"
    )
    job = tmp_path / "nightly.yaml"
    job.write_text("name: nightly\nimages: [cpu_img]\nsuites:\n  - name: smoke\n")
    local = ("--catalog", str(catalog), "--pull", "never")
    run(db, "--job", str(job), *local)
    tiers_before = doc(db, "--layout", "tiers")
    run(db, "--image", "fake_rocm6.3", "--cpu-only", "--suite", "smoke", *local)
    # one --cpu-only run of the ROCm image no longer turns the tiers page into "rocm: experimental"
    tiers = doc(db, "--layout", "tiers")
    assert [r["key"] for r in tiers["rows"]] == [r["key"] for r in tiers_before["rows"]] == ["cpu"]
    assert "fake_rocm6.3" not in json.dumps(doc(db)["columns"])
    # asked for, it is its own environment, and its CPU passes are "cpu only", never ✅
    d = doc(db, "--include-adhoc")
    assert "fake_rocm6.3 · cpu only" in d["columns"]
    rocm = [c for (_, col), c in cells(d).items() if col == "fake_rocm6.3 · cpu only"]
    assert rocm and not any(c["verdict"] == "pass" for c in rocm)
    assert any(c["verdict"] == "cpu-only" and "cpu only" in c["text"] for c in rocm)
    md = run_cli("matrix", "render", "--format", "md", "--include-adhoc", db=db).stdout
    column = [line.split("|")[-2] for line in md.splitlines() if line.startswith("| `smoke.")]
    assert column and not any("✅" in c for c in column)


@pytest.mark.docker
def test_a_bisect_never_erases_an_image_column(db):
    _docker_ready("valorch/test:pip-torch", "valorch/test:debian-torch")
    new, old = "cpu_debian12_py3.11_pytorch_2.13", "cpu_debian12_py3.11_pytorch_1.13"
    job = ROOT / "jobs" / "local-test.yaml"
    run(db, "--job", str(job), "--pull", "never")
    before = cells(doc(db))
    proc = run_cli("bisect", "--check", "smoke.matmul.fp32", "--images", old, new, db=db)
    assert (
        proc.returncode == 2 and "every image is good" in proc.stderr
    )  # it ran the check in 2.13 to say so
    after = cells(doc(db))
    assert (
        after.keys() == before.keys()
    )  # the 2.13 column keeps every check, not the bisected one alone
    assert {k: c["runs"] for k, c in after.items()} == {k: c["runs"] for k, c in before.items()}
    bisect = doc(db, "--job", "bisect")
    assert [r["key"] for r in bisect["rows"]] == ["smoke.matmul.fp32"]


@pytest.mark.docker
def test_a_cell_from_an_older_digest_says_so(db):
    _docker_ready("valorch/test:pip-torch", "valorch/test:debian-torch")
    tag = f"valorch-accept/digest-{os.getpid()}:1"
    subprocess.run(["docker", "tag", "valorch/test:pip-torch", tag], check=True)
    try:
        run(db, "--image", tag, "--suite", "smoke", "--pull", "never")
        subprocess.run(
            ["docker", "tag", "valorch/test:debian-torch", tag], check=True
        )  # the tag moves
        run(db, "--image", tag, *MATMUL, "--pull", "never")
        by = cells(doc(db))
        old = [
            c
            for (row, _), c in by.items()
            if not row.startswith("smoke.matmul") and c["when"] and c["verdict"] not in ("skip", "")
        ]
        new = [c for (row, _), c in by.items() if row.startswith("smoke.matmul")]
        assert old and new
        assert all("previous-digest" in c["flags"] and "previous digest" in c["text"] for c in old)
        assert not any("previous-digest" in c["flags"] for c in new)
    finally:
        subprocess.run(["docker", "rmi", tag], capture_output=True)
