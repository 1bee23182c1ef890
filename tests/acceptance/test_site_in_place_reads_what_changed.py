"""`valorch site build` in place asks the store's change log which runs changed since the
previous build, and says how many; a verdict of `valorch diff` behind a step on the trend
plots (ext/site/steps.py) is not made again where nothing it reads changed: not the two
runs, no run of the same image and host before them, nothing that is not a run, the same
day. Any of those changed, by valorch or by SQL by hand, and the site built in place is
again byte for byte a full build, even where the manifest's verdicts were forged."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from orchestrator.spec import CheckResult
from tests.acceptance.test_site_updates_in_place import (
    A,
    B,
    _add,
    _build,
    _same_bytes,
    _store,
    _timed,
)

MATMUL = "checks/kernels.matmul.fp32.html"


@pytest.fixture
def stepped(tmp_path):
    """The store of the in-place tests, then six runs of image a five times slower: a step
    that `valorch diff` confirms; the site built."""
    db, out = tmp_path / "s.sqlite", tmp_path / "site"
    _store(db)
    for i in range(40, 46):
        _add(db, A, i, [_timed("kernels.matmul.fp32", 5e-3, i)])
    said = _build(db, out)
    assert "changed since" not in said  # nothing to compare with: a first build
    return db, out


def _manifest(out: Path) -> dict:
    return json.loads((out / ".valorch-site").read_text())


def _forge(out: Path, **extra: str) -> None:
    """Every verdict the previous build kept turned around: a step the diff called slower is
    now said to be faster (the plot would show it rejected), as a stale or planted manifest
    would say."""
    doc = _manifest(out)
    assert doc["confirmed"], "the step was confirmed by a diff"
    doc["confirmed"] = {
        pair: {check: "faster" if kind == "slower" else kind for check, kind in kinds.items()}
        for pair, kinds in doc["confirmed"].items()
    }
    doc.update(extra)
    (out / ".valorch-site").write_text(json.dumps(doc))


def _full(db: Path, tmp: Path) -> Path:
    fresh = tmp / "fresh"
    _build(db, fresh)
    return fresh


def test_the_build_in_place_says_how_many_runs_changed_and_keeps_the_diffs(stepped, tmp_path):
    db, out = stepped
    _add(db, B, 50, [_timed("kernels.conv.fp16", 2e-3, 50)])  # another image: its own history
    kept = _manifest(out)["confirmed"]
    said = _build(db, out)
    assert "1 run changed since the previous build" in said
    assert _manifest(out)["confirmed"] == kept
    _same_bytes(out, _full(db, tmp_path))


def test_a_verdict_that_still_holds_is_not_made_again(stepped, tmp_path):
    db, out = stepped
    _forge(out)
    _add(db, B, 50, [_timed("kernels.conv.fp16", 2e-3, 50)])
    _build(db, out)
    # the turned verdict was taken as it was kept: the matmul page says the step is not one
    assert (out / MATMUL).read_bytes() != (_full(db, tmp_path) / MATMUL).read_bytes()


def _earlier_run_of_image_a_edited(db: Path) -> None:
    with sqlite3.connect(db) as conn:  # by hand, not through valorch
        rid = conn.execute(
            "SELECT run.id FROM run JOIN image ON image.id = run.image_id "
            "WHERE image.alias = 'img_a' ORDER BY started LIMIT 1"
        ).fetchone()[0]
        conn.execute("UPDATE result SET message = 'edited' WHERE run_id = ?", (rid,))


def _a_check_edited(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE \"check\" SET feature = 'renamed' WHERE check_id = 'smoke.add'")


def _a_host_renamed(db: Path) -> None:
    with sqlite3.connect(db) as conn:  # every run page names its host
        conn.execute("UPDATE host SET name = 'renamed'")


def _the_log_emptied(db: Path) -> None:
    _add(db, B, 50, [_timed("kernels.conv.fp16", 2e-3, 50)])
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM store_change")


@pytest.mark.parametrize(
    "change",
    [_earlier_run_of_image_a_edited, _a_check_edited, _a_host_renamed, _the_log_emptied],
)
def test_a_change_by_hand_makes_what_it_touches_again(stepped, tmp_path, change):
    db, out = stepped
    _forge(out)
    change(db)
    said = _build(db, out)
    assert "kept" in said or change is _a_host_renamed  # every page names its environment
    if change is _the_log_emptied:  # a log that does not account for the store tells nothing
        assert "changed since" not in said
    _same_bytes(out, _full(db, tmp_path))


def test_another_day_makes_every_diff_again(stepped, tmp_path):
    db, out = stepped
    _forge(out, today="2001-01-01")  # known issues expire: a verdict holds for its day
    _add(db, B, 50, [_timed("kernels.conv.fp16", 2e-3, 50)])
    _build(db, out)
    _same_bytes(out, _full(db, tmp_path))


def _catalog(tmp: Path, local: bool) -> Path:
    d = tmp / f"catalog-{local}"
    d.mkdir(exist_ok=True)
    (d / "acme.yaml").write_text(
        f"family: acme\nbackend: cpu\nlocal: {str(local).lower()}\nimages:\n"
        "  - alias: img_a\n    reference: acme/img:a\n"
    )
    return d


def test_a_run_page_is_kept_unread_only_while_its_image_stays_as_local_as_it_was(stepped, tmp_path):
    db, out = stepped
    failed = _add(db, A, 47, [CheckResult(check="smoke.add", status="fail", message="broke")])
    _build(db, out, "--catalog", str(_catalog(tmp_path, False)))
    page = out / "runs" / f"{failed}.html"
    before = page.read_bytes()
    _add(db, B, 50, [_timed("kernels.conv.fp16", 2e-3, 50)])
    # image a now local: the repro command of its failure runs it without pulling
    said = _build(db, out, "--catalog", str(_catalog(tmp_path, True)))
    assert "1 run changed since the previous build" in said
    assert page.read_bytes() != before
    fresh = tmp_path / "fresh"
    _build(db, fresh, "--catalog", str(_catalog(tmp_path, True)))
    _same_bytes(out, fresh)
