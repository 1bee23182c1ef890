"""The verify gate against an independent oracle.

The oracle below is written from docs/attestations.md ("How verify decides") alone, without
the production decision code: Hypothesis draws sets of attestations about one digest (valid
or rejected, predicate types, results, counts of passed/warned/failed checks, checks judged,
signed times with ties and gaps, imported or measured, copies of one statement) and a
requirement; the production decision (``policy.decide``, over the already decoded
attestations) must equal the oracle's: verdict, exit code, the reasons' kinds, which
attestation decides and every attestation's role. The terminal lines and the JSON document,
parsed back, must show the same verdict and exit code."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone

from hypothesis import event, given, settings
from hypothesis import strategies as st

from orchestrator.ext.attest import policy, report

TEST_RESULT = "https://in-toto.io/attestation/test-result/v0.1"
VSA = "https://slsa.dev/verification_summary/v1"
OTHER = "https://example.org/other/v1"
DIGEST = "sha256:" + "ab" * 32
OTHER_DIGEST = "sha256:" + "cd" * 32
NOW = datetime(2026, 3, 1, tzinfo=timezone.utc)
CHECKS = ("k.a1", "k.a2", "k.b1", "f.x")
GLOB_PREFIX = "k.a"  # --require passed:k.a*

# ---------------------------------------------------------------------------------------------
# the drawn attestations: plain dicts, the statements built here from literal field names


#: the choices of one attestation. Each attestation is one drawn integer that seeds its
#: choices (one draw per attestation keeps 3,000 cases within seconds, and every field is
#: spread evenly, where Hypothesis's integers favour small values)
CHOICES = (
    ("state", ["ok"] * 9 + ["bad signature", "other subject", "no statement"]),
    ("type", [TEST_RESULT] * 3 + [VSA] * 3 + [OTHER]),
    ("age", [0, 1, 2, 3, 4, 0, 1, 2, None]),  # half-hours before NOW: few values, so ties happen
    ("result", ["PASSED", "PASSED", "PASSED", "FAILED", "WARNED"]),
    ("passed", [[c for b, c in enumerate(CHECKS) if m >> b & 1] for m in range(16)]),
    ("warned", [[], [], [], [], *([c] for c in CHECKS)]),
    ("failed", [[], [], [], [], *([c] for c in CHECKS)]),
    ("judged", [3, 1, 3, 1, 0, None]),
    ("provenance", ["measured", "measured", "measured", "imported", None]),
    ("copy", [False, False, False, False, True]),  # a copy of the attestation before it
)


def decode(n: int) -> dict:
    pick = random.Random(n).choice
    return {name: pick(options) for name, options in CHOICES}


attestation = st.integers(0, 2**32).map(decode)


def stamp(age):
    if age is None:
        return None
    return (NOW - timedelta(minutes=age * 30)).isoformat().replace("+00:00", "Z")


def build(spec, nonce):
    """The signed statement of one drawn attestation."""
    hexd = (OTHER_DIGEST if spec["state"] == "other subject" else DIGEST).split(":")[1]
    ann = {}
    if spec["provenance"] == "measured":
        ann["provenance"] = "measured"
    elif spec["provenance"] == "imported":
        ann |= {"provenance": "imported", "importedFrom": "run 1 from x.json"}
    when = stamp(spec["age"])
    if spec["type"] == VSA:
        if spec["judged"] is not None:
            ann["checksJudged"] = spec["judged"]
        pred = {
            "verificationResult": "PASSED" if spec["result"] == "PASSED" else "FAILED",
            "policy": {"uri": f"valorch:qualify?job=j{nonce}", "annotations": ann},
        }
        if when:
            pred["timeVerified"] = when
    else:
        if when:
            ann["attestedAt"] = when
        pred = {
            "result": spec["result"],
            "url": f"valorch:run/{nonce}",
            "configuration": [{"name": "valorch-job", "annotations": ann}],
            "passedTests": spec["passed"],
            "warnedTests": spec["warned"],
            "failedTests": spec["failed"],
        }
    doc = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "reg/x", "digest": {"sha256": hexd}}],
        "predicateType": spec["type"],
        "predicate": pred,
    }
    if spec["state"] == "no statement":
        doc["_type"] = "https://in-toto.io/Statement/v0.1"
    return doc


def materialise(specs):
    """The decoded attestations of ``specs`` (after ``mark_copies``): a copy carries the very
    statement of the attestation it copies."""
    out, docs = [], []
    for i, spec in enumerate(specs):
        doc = docs[spec["_copy_of"]] if spec["_copy_of"] is not None else build(spec, i)
        docs.append(doc)
        payload = json.dumps(doc, sort_keys=True).encode()
        problem = "wrong key: signed by another key" if spec["state"] == "bad signature" else ""
        out.append(
            policy.Decoded(
                f"reg/x#{i}", None if problem else doc, b"" if problem else payload, problem
            )
        )
    return out


# ---------------------------------------------------------------------------------------------
# the oracle: docs/attestations.md, "How verify decides"


def oracle(specs, require, max_age_min, allow_imported):
    wanted = VSA if require == "qualified" else TEST_RESULT
    roles = [None] * len(specs)
    cands = []
    for i, s in enumerate(specs):
        if s["state"] != "ok":
            roles[i] = "rejected"
        elif s["type"] != wanted:
            roles[i] = "ignored"
        elif s["_copy_of"] is not None:  # the same signed statement as a candidate before it
            roles[i] = "duplicate"
        else:
            cands.append(i)
    reasons = set()
    decider = None
    if not cands:
        reasons.add("none")
    else:
        undated = [i for i in cands if specs[i]["age"] is None]
        dated = [i for i in cands if specs[i]["age"] is not None]
        if undated:
            reasons.add("undated")
            for i in undated:
                roles[i] = "undated"
            for i in dated:
                roles[i] = "undecided"
        else:
            youngest = min(specs[i]["age"] for i in dated)
            top = [i for i in dated if specs[i]["age"] == youngest]
            if len(top) > 1:
                reasons.add("tie")
            else:
                decider = top[0]
            for i in dated:
                roles[i] = (
                    "decides"
                    if i == decider
                    else "tied"
                    if i in top and decider is None
                    else "superseded"
                )
    if decider is not None:
        s = specs[decider]
        if max_age_min is not None and s["age"] * 30 > max_age_min:
            reasons.add("expired")
        if not allow_imported and s["provenance"] != "measured":
            reasons.add("imported" if s["provenance"] == "imported" else "provenance")
        if require == "qualified":
            if s["result"] != "PASSED":
                reasons.add("result")
            if not s["judged"]:  # none stated, or 0
                reasons.add("nothing judged")
        elif require == "passed":
            if s["result"] != "PASSED" or s["warned"] or s["failed"]:
                reasons.add("result")
            if not s["passed"]:
                reasons.add("no tests")
        else:
            if any(c.startswith(GLOB_PREFIX) for c in s["warned"] + s["failed"]):
                reasons.add("result")
            if not any(c.startswith(GLOB_PREFIX) for c in s["passed"]):
                reasons.add("no tests")
    return {
        "holds": not reasons,
        "exit": 0 if not reasons else 1,
        "reasons": reasons,
        "decider": decider,
        "roles": roles,
    }


def mark_copies(specs):
    """Resolve copies the way materialise does, noting which earlier index each copies."""
    out = []
    for i, spec in enumerate(specs):
        if spec["copy"] and out:
            src = out[-1]
            root = src["_copy_of"] if src["_copy_of"] is not None else i - 1
            out.append({**src, "_copy_of": root})
        else:
            out.append({**spec, "_copy_of": None})
    return out


CASES = 3000


@settings(max_examples=CASES, deadline=None)
@given(
    specs=st.lists(attestation, min_size=3, max_size=7),
    require=st.sampled_from(["passed", "qualified", f"passed:{GLOB_PREFIX}*"]),
    max_age_min=st.sampled_from([None, None, 45, 200]),
    allow_imported=st.booleans(),
)
def test_verify_decision_equals_the_oracle_and_every_sink_shows_it(
    specs, require, max_age_min, allow_imported
):
    specs = mark_copies(specs)
    decoded = materialise(specs)
    kind, _, glob = require.partition(":")
    d = policy.decide(
        decoded,
        image="reg/x:1",
        digest=DIGEST,
        requirement=(kind, glob),
        require=require,
        looked="tag",
        max_age=None if max_age_min is None else timedelta(minutes=max_age_min),
        now=NOW,
        allow_imported=allow_imported,
    )
    want = oracle(specs, require, max_age_min, allow_imported)
    event("verified" if want["holds"] else "not verified")
    for code in want["reasons"]:
        event(f"reason {code}")
    assert (d.holds, d.exit_code) == (want["holds"], want["exit"])
    assert {r.code for r in d.reasons} == want["reasons"]
    assert [a.role for a in d.attestations] == want["roles"]
    assert d.decided_by == ("" if want["decider"] is None else f"reg/x#{want['decider']}")
    # the JSON sink, parsed back
    doc = json.loads(json.dumps(report.as_json(d)))
    assert (doc["holds"], doc["exit_code"]) == (want["holds"], want["exit"])
    assert doc["verdict"] == ("verified" if want["holds"] else "not verified")
    assert [a["role"] for a in doc["attestations"]] == want["roles"]
    assert {r["code"] for r in doc["reasons"]} == want["reasons"]
    # the terminal sink: one line per attestation with its role, then the verdict
    lines = report.lines(d)
    assert len(lines) == len(specs) + 1
    for (_, text), role in zip(lines, want["roles"], strict=False):
        assert text.split()[0] == report.ROLE[role]
    stream, last = lines[-1]
    assert (stream, last.split(":")[0]) == (
        ("out", "verified") if want["holds"] else ("err", "not verified")
    )
    assert report.outcome(d).code == want["exit"]
