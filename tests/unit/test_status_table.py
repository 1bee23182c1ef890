"""docs/statuses.md's table of status × sink is what every sink does: one result of each
status is rendered through each sink (terminal/Markdown, RST, HTML, JSON, run and qualify
JUnit, the attestation predicate, tiers, notifications) and compared with the table as
parsed from the page, so that the page and the code cannot drift apart."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace as Ns
from xml.etree import ElementTree as ET

import pytest

from orchestrator.ext.attest import intoto
from orchestrator.ext.notify.service import Posting, from_report
from orchestrator.matrix.document import Document, Header
from orchestrator.matrix.layouts import checks_table
from orchestrator.matrix.model import Observation, RunInfo, build
from orchestrator.matrix.tiers import Policy, tiers
from orchestrator.regression.gate import decide
from orchestrator.regression.rule import Obs, Side, compare
from orchestrator.render.badges import TONE, cell_html
from orchestrator.render.diff import diff_junit
from orchestrator.render.junit import results_junit
from orchestrator.render.markdown import matrix_md
from orchestrator.render.rst import document_rst
from orchestrator.statuses import LEGEND, STATUSES, SYMBOL

DOC = Path(__file__).resolve().parents[2] / "docs" / "statuses.md"
COLOUR = {"good": "green", "bad": "red", "warn": "amber", "none": "grey", "info": "blue"}


def _tables() -> list[list[dict[str, str]]]:
    """Every Markdown table of the page, as rows of {column: cell} (backticks removed)."""
    tables: list[list[dict[str, str]]] = []
    lines = DOC.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("| ") and i + 1 < len(lines) and lines[i + 1].startswith("| ---"):
            heads = [h.strip() for h in lines[i].strip("|").split("|")]
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("| "):
                cells = [c.strip().strip("`") for c in lines[i].strip("|").split("|")]
                rows.append(dict(zip(heads, cells, strict=True)))
                i += 1
            tables.append(rows)
        i += 1
    return tables


STATUS_ROWS = {r["status"]: r for r in _tables()[0]}
VERDICT_ROWS = {r["verdict"]: r for r in _tables()[1]}


def test_the_table_lists_every_status_of_the_vocabulary_once():
    assert list(STATUS_ROWS) == list(STATUSES)


def _cell_text(row: dict[str, str]) -> str:
    text = row["terminal, Markdown, RST"]
    return "" if text == "(blank)" else text


def _matrix(status: str):
    return build([Observation("img", "k.x", "X", "feature", None, status, 1, "run1")])


@pytest.mark.parametrize("status", STATUSES)
def test_terminal_markdown_and_rst_show_the_tables_cell(status):
    want = _cell_text(STATUS_ROWS[status])
    md = matrix_md(_matrix(status))
    assert f"| `k.x` | X |  | {want} |" in md.splitlines()
    obs = [Observation("run1", "k.x", "X", "feature", None, status, 1, "run1")]
    table = checks_table(obs, [RunInfo("run1", "img", "cpu", "h")], "checks", "images")
    rst = document_rst(Document(Header("v", "2026-01-01"), table))
    assert rst.splitlines()[rst.splitlines().index("    * - ``k.x``") + 3] == (
        f"      - {want}".rstrip()
    )


@pytest.mark.parametrize("status", STATUSES)
def test_html_shows_the_tables_word_and_colour(status):
    word, colour = re.fullmatch(r"(.+) \((\w+)\)", STATUS_ROWS[status]["HTML"]).groups()
    cell = _matrix(status).cell("k.x", "img")
    html = str(cell_html(cell.text, cell.verdict))
    assert f">{word}</span>" in html and COLOUR[TONE[status]] == colour


@pytest.mark.parametrize("status", STATUSES)
def test_json_carries_the_status_as_the_verdict(status):
    obs = [Observation("run1", "k.x", "X", "feature", None, status, 1, "run1")]
    table = checks_table(obs, [RunInfo("run1", "img", "cpu", "h")], "checks", "images")
    doc = json.loads(json.dumps(Document(Header("v", "2026-01-01"), table).to_dict()))
    assert doc["rows"][0]["cells"]["img"]["verdict"] == STATUS_ROWS[status]["JSON"]


def _junit_kind(case: ET.Element) -> str:
    child = next(iter(case), None)
    if child is None:
        return "passed"
    return "passed, with system-out" if child.tag == "system-out" else child.tag


@pytest.mark.parametrize("status", STATUSES)
def test_run_junit_follows_the_table(status):
    run = Ns(id="r1", image=Ns(alias="img", backend="cpu"), host=Ns(name="h"))
    run.started = datetime(2026, 1, 1)
    res = Ns(
        check=Ns(check_id="k.x"),
        status=status,
        message="why",
        attempt=1,
        duration_s=0.1,
        log="",
        metrics={},
    )
    (case,) = ET.fromstring(results_junit([run], {"r1": [res]})).iter("testcase")
    assert _junit_kind(case) == STATUS_ROWS[status]["JUnit"]
    if STATUS_ROWS[status]["JUnit"] == "skipped":
        assert case.find("skipped").get("message").startswith(f"{status}: why")


@pytest.mark.parametrize("status", STATUSES)
def test_qualify_junit_follows_the_table(status):
    """The same status on both sides (nothing changed): the candidate's testcase reads as
    run --junit's."""
    side = [Obs("img", "k.x", status, message="why")]
    report = compare(Side("base", "baseline", tuple(side)), Side("head", "qualify", tuple(side)))
    (case,) = ET.fromstring(diff_junit(report, decide(report))).iter("testcase")
    assert _junit_kind(case) == STATUS_ROWS[status]["JUnit"]


@pytest.mark.parametrize("status", STATUSES)
def test_the_attestation_predicate_follows_the_table(status):
    ev = intoto.Evidence(
        "r/img", "sha256:" + "0" * 64, {"k.x": status}, "h", "0.3", (), (), (), "u"
    )
    pred = intoto.test_result(ev)
    listed = [k for k in ("passedTests", "warnedTests", "failedTests") if pred[k] == ["k.x"]]
    want = STATUS_ROWS[status]["attestation"]
    assert listed == ([] if want == "not listed" else [want])
    assert (pred["result"] == "FAILED") == (want == "failedTests")


@pytest.mark.parametrize("status", STATUSES)
def test_tiers_follow_the_table(status):
    from orchestrator.matrix.model import Cell

    (row,) = tiers({"cpu": [Cell(status, (status,), ("r1",))]}, Policy(min_runs=1, min_span_days=0))
    got = "not counted" if row.counted == 0 else "passing" if row.passed else "not passing"
    assert got == STATUS_ROWS[status]["tiers"]


@pytest.mark.parametrize("status", STATUSES)
def test_notifications_follow_the_table(status):
    base = Side("base", "baseline", (Obs("img", "k.x", "pass"),))
    head = Side("head", "qualify", (Obs("img", "k.x", status, message="why"),))
    out = from_report(Posting(compare(base, head), "valorch qualify"), {})
    got = "regression" if out.regressions else "not listed"
    assert got == STATUS_ROWS[status]["notification"]


@pytest.mark.parametrize("verdict", ["flaky", "cpu-only", "missing"])
def test_verdicts_that_are_not_statuses_follow_their_table(verdict):
    from orchestrator.matrix.model import Cell

    row = VERDICT_ROWS[verdict]
    cell = Cell(verdict)
    assert cell.text == row["terminal, Markdown, RST"]
    word, colour = re.fullmatch(r"(.+) \((\w+)\)", row["HTML"]).groups()
    assert f">{word}</span>" in str(cell_html(cell.text, cell.verdict))
    assert COLOUR[TONE[verdict]] == colour


def test_no_symbol_means_two_things():
    """⚠️ is partial support only; each symbol the legend names stands for one meaning."""
    meanings: dict[str, set[str]] = {}
    groups = {"fail": "failing", "crash": "failing", "timeout": "failing"}
    groups |= {"error": "inconclusive", "flaky": "inconclusive"}
    groups |= {"skip": "blank", "n/a": "blank"}
    for verdict, symbol in SYMBOL.items():
        meanings.setdefault(symbol, set()).add(groups.get(verdict, verdict))
    assert {s: m for s, m in meanings.items() if len(m) > 1} == {}
    assert LEGEND.count("⚠️") == 1 and "⚠️ partial support" in LEGEND


def test_an_old_enough_sample_makes_a_tier_and_a_small_one_says_so():
    from orchestrator.matrix.model import Cell

    now = datetime(2026, 1, 10)
    cells = [Cell("pass", ("pass",), (r,)) for r in ("a", "b", "c")]
    ended = {"a": now - timedelta(days=3), "b": now - timedelta(days=1), "c": now}
    (ok,) = tiers({"cpu": cells}, Policy(), ended)
    assert ok.tier == "first-class" and ok.short is None
    (small,) = tiers({"cpu": cells[:2]}, Policy(), ended)
    assert small.tier == "too few runs"
    assert small.short == "2 runs over 2.0 days; a tier needs 3 over 1 day(s)"
