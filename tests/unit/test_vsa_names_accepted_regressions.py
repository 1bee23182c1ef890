"""A qualification's VSA names the regressions it shipped knowingly (valorch accept), in its
policy's annotations; without any, the annotations hold only the checks judged and the
provenance."""

from __future__ import annotations

from orchestrator.ext.attest import intoto
from orchestrator.ext.attest.service import _accepted

EV = intoto.Evidence(
    name="reg/app",
    digest="sha256:" + "a" * 64,
    verdicts={"command.x": "fail"},
    spec_hash="h",
    valorch_version="1",
    host_classes=("cpu",),
    suites=("command",),
    runs=("r1",),
    url="",
)


def test_vsa_names_the_accepted_regressions():
    rows = [
        {
            "check": "command.x",
            "env": "host [cpu, cpu]",
            "by": "alice",
            "until": "2099-01-01",
            "reason": "bug 1",
        },
        {"check": 3},  # malformed: left out
    ]
    policy = intoto.Policy("job", "v1", True, "2026-01-01T00:00:00Z", accepted=_accepted(rows))
    got = intoto.vsa(EV, policy)["policy"]
    assert got["annotations"]["acceptedRegressions"] == [
        "command.x host [cpu, cpu] by alice until 2099-01-01: bug 1"
    ]


def test_without_acceptances_the_policy_is_unchanged():
    policy = intoto.Policy("job", "v1", True, "2026-01-01T00:00:00Z")
    assert intoto.vsa(EV, policy)["policy"] == {
        "uri": "valorch:qualify?job=job&baseline=v1",
        "annotations": {"checksJudged": 1, "provenance": "measured"},
    }
    assert _accepted(None) == () and _accepted("x") == ()
