"""render/junit.py: every unexcused failure (tampered included) is a <failure>, an excused one
<skipped> with the known issue's reason, partial a passing testcase with <system-out>."""

from datetime import datetime
from types import SimpleNamespace as Ns
from xml.etree import ElementTree as ET

from orchestrator.render.junit import results_junit


def res(check, status, message="", attempt=1, metrics=None):
    return Ns(
        check=Ns(check_id=check),
        status=status,
        message=message,
        attempt=attempt,
        duration_s=0.1,
        log="",
        metrics=metrics or {},
    )


RUN = Ns(
    id="r1", image=Ns(alias="img", backend="cpu"), host=Ns(name="h1"), started=datetime(2026, 1, 1)
)
RESULTS = {
    "r1": [
        res("a.fail", "fail", "boom"),
        res("a.crash", "crash", "segv"),
        res("a.partial", "partial", "half"),
        res("a.forged", "error", "tampered: forged", metrics={"tampered": True}),
        res("a.error", "error", "harness"),
        res("a.flaky", "fail", attempt=1),
        res("a.flaky", "pass", attempt=2),
    ]
}


def cases(xml):
    out = {}
    for case in ET.fromstring(xml).iter("testcase"):
        child = next(iter(case), None)
        out[case.get("name")] = (
            (child.tag, child.get("type"), child.get("message") or child.text)
            if child is not None
            else ("passed", None, None)
        )
    return out


def test_failures_partial_tampered_and_known_issues():
    got = cases(results_junit([RUN], RESULTS))
    assert got["a.fail"] == ("failure", "fail", "boom") and got["a.crash"][0] == "failure"
    assert got["a.forged"] == ("failure", "tampered", "tampered: forged")
    assert got["a.error"][0] == "error" and got["a.flaky"][0] == "passed"  # the last attempt
    assert got["a.partial"] == ("system-out", None, "partial: half")

    def excuse(run, check, status):
        return (
            "waived: tracked upstream"
            if (run.image.alias, str(run.image.backend), check, status)
            == ("img", "cpu", "a.fail", "fail")
            else None
        )

    xml = results_junit([RUN], RESULTS, excuse=excuse)
    got = cases(xml)
    assert (
        got["a.fail"] == ("skipped", None, "waived: tracked upstream")
        and got["a.crash"][0] == "failure"
    )
    suite = ET.fromstring(xml).find("testsuite")
    assert (suite.get("failures"), suite.get("skipped"), suite.get("errors")) == ("2", "1", "1")
