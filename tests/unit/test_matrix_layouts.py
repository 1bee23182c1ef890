from datetime import datetime

import pytest

from orchestrator.matrix.document import Document, Header
from orchestrator.matrix.layouts import (
    CatalogImage,
    RunInfo,
    checks_table,
    components_table,
    since_table,
    summary_table,
    tiers_table,
)
from orchestrator.matrix.model import Cell, Observation, combine
from orchestrator.matrix.since import since_of, version_key
from orchestrator.matrix.tiers import Policy, tier_of


def since(points):
    """The start of the newest passing streak (pass/fail points); None when the newest fails."""
    return since_of((v, "pass" if ok else "fail") for v, ok in points).version


def test_since_is_the_start_of_the_newest_passing_streak():
    assert since([("1.13", False), ("2.13.0", True)]) == "2.13.0"
    assert since([("2.3", True), ("2.4", True), ("1.13", False), ("2.1", True)]) == "2.1"
    assert since([("2.3", True), ("2.4", False)]) is None  # broken in the newest version
    assert since([("2.1", True), ("2.2", False), ("2.3", True)]) == "2.3"  # regressed, came back
    assert (
        since([("2.4", True), ("2.4", False), ("2.5", True)]) == "2.5"
    )  # one failing image of 2.4 counts
    assert since([]) is None
    assert version_key("2.13.0") > version_key("2.4") > version_key("1.13")
    assert version_key("0.1.12_2") > version_key("0.1.6")


def test_combine_rules():
    ok, bad, err = (
        Cell("pass", ("pass",), ("r1",)),
        Cell("fail", ("fail",), ("r2",), "boom"),
        Cell("error", ("error",)),
    )
    assert combine([ok, ok]).verdict == "pass"
    c = combine([ok, bad])
    assert c.verdict == "fail" and c.runs == ("r1", "r2") and c.message == "boom"
    assert combine([ok, err]).verdict == "error"
    assert combine([ok, Cell("unsupported")]).verdict == "unsupported"
    assert combine([ok, Cell("skip")]).verdict == "pass"
    assert combine([Cell("skip"), Cell("missing")]).verdict == "skip"
    assert combine([ok, Cell("flaky")]).verdict == "flaky"


def test_tier_policy_and_overrides():
    p = Policy()
    assert tier_of(98, 100, 0, p) == "first-class"
    assert tier_of(99, 100, 1, p) == "best-effort"  # a crash bars first-class
    assert tier_of(80, 100, 0, p) == "best-effort"
    assert tier_of(1, 100, 0, p) == "experimental"
    assert tier_of(0, 100, 0, p) == "unsupported" and tier_of(0, 0, 0, p) == "unsupported"
    strict = Policy.from_mapping({"first_class_min_pass": 1, "best_effort_min_pass": 0.5})
    assert tier_of(99, 100, 0, strict) == "best-effort" and "100%" in strict.describe()
    with pytest.raises(ValueError, match="unknown tier policy key 'first_class'"):
        Policy.from_mapping({"first_class": 1})
    with pytest.raises(ValueError, match="between 0 and 1"):
        Policy.from_mapping({"best_effort_min_pass": 80})


def obs(run, check, status, feature=None, attempt=1):
    return Observation(
        column=run,
        check=check,
        feature=feature or check,
        kind="feature",
        library=None,
        status=status,
        attempt=attempt,
        run_id=run,
    )


RUNS = [
    RunInfo("r113", "torch113", "cpu", "h1", {"pytorch": "1.13"}, datetime(2026, 1, 2)),
    RunInfo("r213", "torch213", "cpu", "h1", {"pytorch": "2.13.0"}, datetime(2026, 1, 3)),
    RunInfo(
        "rroc", "rocm63", "rocm", "h2", {"pytorch": "2.4.0", "rocm": "6.3"}, datetime(2026, 1, 4)
    ),
]
OBS = [
    obs("r113", "f.float8", "unsupported", "float8"),
    obs("r213", "f.float8", "pass", "float8"),
    obs("rroc", "f.float8", "pass", "float8"),
    obs("r113", "k.mm", "pass", "matmul"),
    obs("r113", "k.mm2", "pass", "matmul"),
    obs("r213", "k.mm", "pass", "matmul"),
    obs("r213", "k.mm2", "fail", "matmul"),
    obs("rroc", "k.mm", "pass", "matmul"),
    obs("rroc", "k.mm2", "crash", "matmul"),
    obs("r113", "k.err", "error", "errs"),
    obs("r113", "k.ok", "pass", "errs"),
]


def test_since_table_from_image_components():
    t = since_table(OBS, RUNS, "features")
    rows = {r.key: r for r in t.rows}
    assert t.columns == ("Since PyTorch", "Since ROCm")
    # 1.13 was tested and fails: 2.4.0 is a measured start; one ROCm version tested: no more than "≤ 6.3"
    assert rows["float8"].cells[0].text == "2.4.0" and rows["float8"].cells[1].text == "≤ 6.3"
    assert "1.13 was tested and does not pass" in rows["float8"].cells[0].note
    assert "not tested before 6.3" in rows["float8"].cells[1].note
    assert set(rows["float8"].cells[0].runs) == {"r113", "r213", "rroc"}
    assert rows["matmul"].cells[0].text == "—"  # fails on 2.13.0, the newest
    by_check = {r.key: r for r in since_table(OBS, RUNS, "checks").rows}
    # passes in every version tested: nothing older than 1.13 was measured
    assert by_check["k.mm"].cells[0].text == "≤ 1.13" and by_check["k.mm"].labels == (
        "k.mm",
        "matmul",
        "",
    )
    assert by_check["k.err"].cells[1].text == "not tested"


def test_feature_rows_combine_checks_and_backends_group_images():
    t = checks_table(OBS, RUNS, "features", "backends")
    assert t.columns == ("cpu", "rocm")
    rows = {r.key: dict(zip(t.columns, r.cells, strict=False)) for r in t.rows}
    assert rows["float8"]["cpu"].verdict == "unsupported" and rows["float8"]["rocm"].text == "✅"
    assert rows["matmul"]["cpu"].verdict == "fail" and rows["matmul"]["rocm"].verdict == "crash"
    assert rows["errs"]["cpu"].verdict == "error" and rows["errs"]["cpu"].text == "⁇ error"


def test_summary_and_tiers_tables():
    t = summary_table(OBS, RUNS)
    s = {r.key: r for r in t.rows}
    assert t.columns == ("Supported (cpu)", "Supported (rocm)")
    # float8: unsupported on 1.13 but passing on 2.13 → the cpu backend's best evidence is ✅
    assert [c.text for c in s["float8"].cells] == ["✅", "✅"] and s["float8"].cells[0].runs == (
        "r213",
    )
    # matmul: 1.13 passes both checks (✅); rocm's only image crashes one → ❌
    assert [c.text for c in s["matmul"].cells] == ["✅", "❌"]
    assert s["matmul"].labels == ("matmul", "") and "k.mm, k.mm2" in s["matmul"].cells[0].note
    one = summary_table([obs("r213", "a", "pass")], RUNS[1:2])
    assert one.columns == ("Supported",) and one.rows[0].cells[0].text == "✅"
    t = tiers_table(OBS, RUNS, "backends", Policy(min_runs=1, min_span_days=0))
    assert t.label_headers == ("Platform",) and t.columns == ("Tier", "Scope", "Notes")
    rows = {r.key: r.cells for r in t.rows}
    # cpu: float8 unsupported (not installed: not counted)+pass, mm pass pass, mm2 pass fail,
    # err error (not counted)+pass → 5/6 pass
    assert rows["cpu"][0].text == "best-effort" and rows["cpu"][0].verdict == "best-effort"
    assert rows["cpu"][1].text == "k (4/5 pass), f (1/1 pass)" and rows["cpu"][1].verdict == ""
    assert rows["cpu"][2].text.startswith(
        "pass rate 83.3% (5 of 6 checks with a verdict), 0 crashes"
    )
    assert rows["rocm"][2].text.startswith(
        "pass rate 66.7% (2 of 3 checks with a verdict), 1 crash or timeout"
    )
    assert t.notes[0].startswith("Tier policy: first-class ≥ 98%")


def test_components_table_marks_drift_from_measured_inventory():
    imgs = [
        CatalogImage(
            "a",
            "rocm/pytorch:a",
            "sha256:" + "0" * 64,
            {"pytorch": "2.4.0", "python": "3.12", "magma": "master", "ubuntu": "24.04"},
        ),
        CatalogImage("b", "rocm/pytorch:b", None, {"pytorch": "2.3.0"}),
    ]
    inv = {"a": ("run-a", {"pytorch": "2.5.1", "python": "3.12.8", "deb:magma": "2.8"})}
    t = components_table(imgs, inv)
    a = dict(zip(t.columns, t.rows[0].cells, strict=False))
    assert t.rows[0].labels == ("rocm/pytorch:a@sha256:000000000000",)
    assert (
        a["PyTorch"].text == "2.4.0 ≠ 2.5.1"
        and a["PyTorch"].verdict == "drift"
        and a["PyTorch"].runs == ("run-a",)
    )
    assert a["Python"].text == "3.12" and a["Python"].verdict == "ok"
    assert a["MAGMA"].text == "master (2.8)" and a["Ubuntu"].verdict == "catalog"
    # neither catalogued nor measured: an empty cell, not "not run"
    assert a["UCX"].text == "" and a["UCX"].verdict == ""
    b = dict(zip(t.columns, t.rows[1].cells, strict=False))
    # catalogued but no inventory measured: "no inventory", never "not run" (it may have run)
    assert b["PyTorch"].text == "2.3.0" and b["PyTorch"].verdict == "no-inventory"
    assert b["Python"].text == "" and b["Python"].verdict == ""


def test_components_show_a_package_that_does_not_import_and_find_inventories_by_digest():
    digest = "sha256:" + "1" * 64
    imgs = [
        CatalogImage("broken", "valorch/test:broken-torchvision", None, {"torchvision": "0.14"}),
        CatalogImage("debian-torch", "debian-torch:v1", digest, {"pytorch": "2.13"}),
    ]
    inv = {"broken": ("run-b", {"torchvision": "0.14.1"})}
    other_alias = {digest: ("run-d", {"pytorch": "2.13.0"})}
    errors = {"run-b": {"torchvision": "undefined symbol: _ZN2at4_ops5clone4call"}}
    t = components_table(imgs, inv, other_alias, errors)
    broken = dict(zip(t.columns, t.rows[0].cells, strict=False))["torchvision"]
    assert broken.verdict == "broken" and broken.text == "0.14.1 (does not import)"
    assert "undefined symbol" in broken.note
    audited = dict(zip(t.columns, t.rows[1].cells, strict=False))["PyTorch"]
    assert audited.verdict == "ok" and audited.runs == ("run-d",)


def test_document_round_trips_through_a_dict():
    doc = Document(
        Header("v1", "2026-01-04", ("db",)), checks_table(OBS, RUNS, "checks", "images"), {"a": 1}
    )
    assert Document.from_dict(doc.to_dict()) == doc


def test_since_uses_the_versions_the_runs_measured_and_notes_the_catalogued_one():
    """The version rows measured 2.6.0+cu124 in an image catalogued as 2.5: Since reads 2.6.0
    (the build tag dropped) and the cell notes what the catalog said."""
    runs = [
        RunInfo("ra", "old", "cpu", "h1", {"pytorch": "2.4"}, datetime(2026, 1, 2)),
        RunInfo("rb", "cuda", "cuda", "h1", {"pytorch": "2.5"}, datetime(2026, 1, 3)),
    ]
    measured = Observation(
        column="rb",
        check="env.version.pytorch",
        feature="PyTorch version",
        kind="environment",
        library=None,
        status="fail",
        attempt=1,
        run_id="rb",
        value="2.6.0+cu124",
    )
    rows = [obs("ra", "f.x", "fail", "x"), obs("rb", "f.x", "pass", "x"), measured]
    cell = {r.key: r for r in since_table(rows, runs, "features").rows}["x"].cells[0]
    assert cell.text == "2.6.0"
    assert "cuda: measured 2.6.0, catalogued 2.5" in cell.note
