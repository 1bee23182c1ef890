"""`valorch site build --out DIR` into the site of an earlier build of the same store
keeps every page whose inputs did not change (not rendered, not written: its file and its
time of modification stay) and makes the rest; the directory then holds, byte for byte,
what a full build into a new directory writes. A store that lost runs (results prune),
another store, another valorch, an old marker or --full make every page again."""

from __future__ import annotations

import filecmp
import os
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from orchestrator.spec import CheckResult, ImageSpec
from orchestrator.store import queries
from orchestrator.store.db import open_engine, session_factory
from orchestrator.store.models import Run
from tests.conftest import run_cli
from tests.store_helpers import stored_run

T0 = datetime(2026, 1, 1)
OLD = 1_000_000_000  # a file's mtime set after each build: still this one, it was kept
EPOCH = {"SOURCE_DATE_EPOCH": "1767225600"}  # both builds say the same build time
A = ImageSpec(alias="img_a", reference="acme/img:a", backend="cpu")
B = ImageSpec(alias="img_b", reference="acme/img:b", backend="rocm")
C = ImageSpec(alias="img_c", reference="acme/img:c", backend="cuda")


def _timed(check: str, level: float, i: int) -> CheckResult:
    samples = tuple(level * (1 + 0.01 * ((i * 7 + k) % 5)) for k in range(8))
    return CheckResult(check=check, status="pass", kind="kernel", samples=samples, unit="s")


def _add(db: Path, image: ImageSpec, i: int, results: list[CheckResult], job="nightly") -> str:
    with session_factory(open_engine(str(db)))() as s:
        run = stored_run(s, image, results, batch=f"b{i:03d}", job=job)
        run.started, run.ended, run.state = (
            T0 + timedelta(hours=i),
            T0 + timedelta(hours=i, minutes=5),
            "done",
        )
        s.commit()
        return str(run.id)


def _store(db: Path) -> list[str]:
    """Image a: a timed check and a smoke check (two ad-hoc runs among them); image b: its
    own timed check. A version is published; two runs of image a are ad hoc."""
    runs = []
    for i in range(6):
        a = [_timed("kernels.matmul.fp32", 1e-3, i), CheckResult(check="smoke.add", status="pass")]
        runs.append(_add(db, A, i, a, job="adhoc" if i in (1, 2) else "nightly"))
        runs.append(_add(db, B, 10 + i, [_timed("kernels.conv.fp16", 2e-3, i)]))
    assert run_cli("matrix", "publish", "--version", "v1", db=db).returncode == 0
    return runs


def _build(db: Path, out: Path, *args: str) -> str:
    proc = run_cli("site", "build", "--out", str(out), *args, db=db, env=EPOCH)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    return proc.stderr


def _files(site: Path) -> set[str]:
    return {str(p.relative_to(site)) for p in site.rglob("*") if p.is_file()}


def _age(site: Path) -> None:
    for p in site.rglob("*"):
        if p.is_file():
            os.utime(p, (OLD, OLD))


def _rewritten(site: Path) -> set[str]:
    return {f for f in _files(site) if (site / f).stat().st_mtime != OLD}


def _same_bytes(a: Path, b: Path) -> None:
    """diff -r: the same files, each with the same bytes."""
    assert _files(a) == _files(b)
    _match, mismatch, errors = filecmp.cmpfiles(a, b, sorted(_files(a)), shallow=False)
    assert (mismatch, errors) == ([], [])


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    """A site built; then one run of image b added, the newest run of image a given a second
    attempt of its smoke check (as `run --resume` stores one), and the site built again in
    place."""
    tmp = tmp_path_factory.mktemp("inplace")
    db = tmp / "s.sqlite"
    runs = _store(db)
    site = tmp / "site"
    first = _build(db, site)
    _age(site)
    new = _add(db, B, 30, [_timed("kernels.conv.fp16", 2.5e-3, 30)])
    with session_factory(open_engine(str(db)))() as s:
        again = CheckResult(check="smoke.add", status="fail", attempt=2, message="flaked")
        assert queries.add_results(s, runs[-2], None, [again]) == 1
        s.commit()
    second = _build(db, site)
    return tmp, db, runs, new, site, first, second


def test_after_one_new_run_only_the_pages_it_changes_are_written(sites):
    _tmp, _db, runs, new, site, first, second = sites
    assert first.startswith("wrote ") and "kept" not in first
    # what changed: the new run of image b (its page, its check's page and plot, its image's
    # page), the attempt added to image a's newest run (that run's page, the smoke check's
    # page, image a's page), and the pages made on every build (matrices, versions, lists,
    # the index); the rest is kept
    kept = {f"runs/{r}.html" for r in runs if r != runs[-2]} | {
        "checks/kernels.matmul.fp32.html",
        "plots/kernels.matmul.fp32.svg",
    }
    files = _files(site)
    assert kept <= files and f"runs/{new}.html" in files
    assert _rewritten(site) == files - kept
    assert f"kept {len(kept)} unchanged" in second and f"of {len(files) - 1} pages" in second


def test_the_site_built_in_place_is_byte_for_byte_a_full_build(sites):
    tmp, db, _runs, _new, site, _first, _second = sites
    fresh = tmp / "fresh"
    assert "kept" not in _build(db, fresh)
    _same_bytes(site, fresh)  # the manifest (.valorch-site) included


def _new_image(db: Path) -> None:
    """A first run of an image no run had: its image page, a new column of the matrices."""
    _add(db, C, 40, [_timed("kernels.matmul.fp32", 1e-3, 40)])


def _trend_and_summary(db: Path) -> None:
    """A run of image a whose timed check is five times slower and whose smoke check fails:
    its trend, its strip, the flips and the counts of the index change."""
    broke = CheckResult(check="smoke.add", status="fail", message="broke")
    _add(db, A, 40, [_timed("kernels.matmul.fp32", 5e-3, 40), broke])


@pytest.mark.parametrize("change", [_new_image, _trend_and_summary])
def test_each_kind_of_new_run_in_place_is_byte_for_byte_a_full_build(change, tmp_path):
    db, out = tmp_path / "s.sqlite", tmp_path / "site"
    _store(db)
    _build(db, out)
    before = {f: (out / f).read_bytes() for f in ("changes.html", "index.html")}
    _age(out)
    change(db)
    said = _build(db, out)
    assert "kept" in said and "made every page again" not in said
    assert all((out / f).read_bytes() != text for f, text in before.items())
    fresh = tmp_path / "fresh"
    _build(db, fresh)
    _same_bytes(out, fresh)


def test_full_makes_every_page_again_with_the_same_bytes(sites):
    tmp, db, _runs, _new, site, _first, _second = sites
    again = tmp / "again"
    _build(db, again)
    _age(again)
    assert "kept" not in _build(db, again, "--full")
    assert _rewritten(again) == _files(again)
    _same_bytes(site, again)


def test_another_store_or_an_old_marker_makes_every_page_again(sites):
    tmp, db, _runs, _new, _site, _first, _second = sites
    other = tmp / "other"
    other.mkdir()
    copy = other / "s.sqlite"
    with sqlite3.connect(db) as src, sqlite3.connect(copy) as dst:
        src.backup(dst)  # the same runs, another store
    out = tmp / "moved"
    _build(db, out)
    _age(out)
    said = _build(copy, out)
    assert "made every page again: it was built from another store" in said
    assert _rewritten(out) == _files(out)
    fresh = other / "fresh"
    _build(copy, fresh)
    _same_bytes(out, fresh)
    _age(out)
    (out / ".valorch-site").write_text("built by valorch site build\n")  # an older valorch's
    said = _build(copy, out)
    assert "made every page again: the previous build left no manifest" in said
    assert _rewritten(out) == _files(out)


def test_a_pruned_store_makes_every_page_again(tmp_path):
    db = tmp_path / "s.sqlite"
    runs = _store(db)
    site = tmp_path / "site"
    _build(db, site)
    _age(site)
    proc = run_cli("results", "prune", "--keep-days", "1", db=db)
    assert proc.returncode == 0, proc.stderr[-2000:]
    with session_factory(open_engine(str(db)))() as s:
        assert s.get(Run, runs[2]) is None  # the ad-hoc run is gone
    said = _build(db, site)
    assert "made every page again: 1 run of the previous build no longer stored" in said
    assert _rewritten(site) == _files(site)
    assert f"runs/{runs[2]}.html" not in _files(site)
    fresh = tmp_path / "fresh"
    _build(db, fresh)
    _same_bytes(site, fresh)


def test_a_link_planted_in_place_of_a_page_is_never_published(sites):
    tmp, db, runs, _new, site, _first, _second = sites
    out = tmp / "planted"
    _build(db, out)
    secret = tmp / "secret.txt"
    secret.write_text("not for the site")
    page = out / f"runs/{runs[0]}.html"
    page.unlink()
    page.symlink_to(secret)  # its key is still in the manifest
    said = _build(db, out)
    assert "kept" in said
    assert not page.is_symlink() and "not for the site" not in page.read_text()
    assert page.read_bytes() == (site / f"runs/{runs[0]}.html").read_bytes()
