"""Where a red cell is read, its triage is written (pure renderers): diff's Markdown and JSON
change lines, and the notification's text."""

import json

from orchestrator.ext.notify.message import Outcome, Regression, github, slack
from orchestrator.ext.notify.service import Posting, from_report
from orchestrator.regression.rule import Obs, Side, compare
from orchestrator.regression.triage import Triage
from orchestrator.render.diff import diff_json, diff_junit, diff_md

WHY = {
    ("img", "k.vfmath"): Triage(
        "regression",
        "passed on the previous digest aaaa (run r1)",
        ("r1", "r2"),
        ("h1",),
        ("sha256:a", "sha256:b"),
    )
}


def report():
    base = Side(
        "r1", "run", (Obs("img", "k.vfmath", "pass"), Obs("img", "k.other", "pass")), ("r1",)
    )
    head = Side(
        "r2", "run", (Obs("img", "k.vfmath", "fail"), Obs("img", "k.other", "pass")), ("r2",)
    )
    return compare(base, head)


def test_diff_md_and_json_say_why_a_red_change_is_red():
    r = report()
    assert "why: regression: passed on the previous digest aaaa (run r1)" in diff_md(r, why=WHY)
    assert "why:" not in diff_md(r)  # without triage, the report is as before
    changes = {c["check"]: c for c in json.loads(diff_json(r, why=WHY))["changes"]}
    assert changes["k.vfmath"]["triage"]["class"] == "regression"
    assert changes["k.vfmath"]["triage"]["digests"] == ["sha256:a", "sha256:b"]
    assert "why: regression: passed on the previous digest" in diff_junit(r, why=WHY)
    assert "why:" not in diff_junit(r)


def test_notification_names_the_class_of_each_regression():
    o = from_report(Posting(report(), "valorch diff r1 → r2", why=WHY), {})
    assert o.regressions[0].why.startswith("regression: passed on the previous digest")
    assert "\n  why: regression: passed on the previous digest aaaa" in slack(o)["text"]
    assert "why: regression" in github(o, "0" * 40)["output"]["text"]
    plain = Outcome("t", 1, (Regression("img", "k", "pass → fail", "valorch run"),))
    assert "why" not in slack(plain)["text"]
