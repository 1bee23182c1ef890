"""in-toto Statements (v1) for validation evidence, and DSSE's pre-authentication encoding.

Pure: data in, JSON-ready dicts and bytes out. The predicates are the ones deploy
policies already know: in-toto's test-result predicate (v0.1) for a run's checks, and
SLSA's Verification Summary (VSA v1) for a qualification. Signing and the registry are
elsewhere (ext/attest/service.py, ext/attest/artifacts.py)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
TEST_RESULT = "https://in-toto.io/attestation/test-result/v0.1"
VSA = "https://slsa.dev/verification_summary/v1"
VERIFIER_ID = "https://github.com/valorch/valorch/attest"  # names the tool; nothing is fetched

#: signed annotations verify reads (docs/attestations.md): where the results were measured
#: ("measured": valorch ran the checks; "imported": results measured elsewhere, imported
#: with ``results import``), from which file, and how many checks a qualification judged
PROVENANCE = "provenance"
IMPORTED_FROM = "importedFrom"
CHECKS_JUDGED = "checksJudged"

PASSED = ("pass",)
WARNED = ("partial", "flaky", "xfail", "error")  # worked in part, or inconclusive: never a pass
FAILED = ("fail", "crash", "timeout")
#: unsupported, skip and n/a (and a check that was not run) are in none of the lists: not a
#: failure of the image, not a pass either (docs/statuses.md)


@dataclass(frozen=True)
class Evidence:
    """What one image digest showed: the final verdict of each check, and how it was run."""

    name: str  # the image's name without tag or digest (registry/repository)
    digest: str  # sha256:<hex>
    verdicts: Mapping[str, str]  # check id -> final verdict (matrix.model.verdict)
    spec_hash: str
    valorch_version: str
    host_classes: tuple[str, ...]
    suites: tuple[str, ...]
    runs: tuple[str, ...]
    url: str  # where the run (or matrix version) can be read
    job: str = ""
    attested_at: str = ""  # RFC 3339: when the statement was made (verify --max-age reads it)
    # where the runs' results came from when they were imported (``results import``): one
    # line per imported run; empty when valorch ran every check of the evidence
    imported_from: tuple[str, ...] = ()


def provenance(ev: Evidence) -> dict[str, str]:
    """The signed provenance annotations of ``ev``."""
    if not ev.imported_from:
        return {PROVENANCE: "measured"}
    return {PROVENANCE: "imported", IMPORTED_FROM: "; ".join(ev.imported_from)[:1000]}


@dataclass(frozen=True)
class Policy:
    """What a qualification checked: the job against its baseline, and whether it held."""

    job: str
    baseline: str
    passed: bool
    verified_at: str  # RFC 3339
    # regressions shipped knowingly (valorch accept): "CHECK ENV by NAME until DATE: REASON"
    accepted: tuple[str, ...] = ()


def outcome(verdicts: Mapping[str, str]) -> str:
    """PASSED, WARNED or FAILED for a set of check verdicts (unsupported, skip and n/a count
    for nothing)."""
    values = set(verdicts.values())
    if values & set(FAILED):
        return "FAILED"
    if values & set(WARNED):
        return "WARNED"
    return "PASSED"


def test_result(ev: Evidence) -> dict[str, Any]:
    """The test-result predicate of ``ev`` (https://in-toto.io/attestation/test-result/v0.1)."""

    def with_(kinds: Iterable[str]) -> list[str]:
        return sorted(c for c, v in ev.verdicts.items() if v in kinds)

    annotations = {
        "job": ev.job,
        "specHash": ev.spec_hash,
        "valorchVersion": ev.valorch_version,
        "hostClass": ", ".join(ev.host_classes),
        "suites": ",".join(ev.suites),
        "runs": ",".join(ev.runs),
        "attestedAt": ev.attested_at,
        **provenance(ev),
    }
    config = {
        "name": "valorch-job",
        "uri": f"valorch:job/{ev.job or 'adhoc'}?spec={ev.spec_hash}",
        "annotations": annotations,
    }
    return {
        "result": outcome(ev.verdicts),
        "configuration": [config],
        "url": ev.url,
        "passedTests": with_(PASSED),
        "warnedTests": with_(WARNED),
        "failedTests": with_(FAILED),
    }


def vsa(ev: Evidence, policy: Policy) -> dict[str, Any]:
    """A SLSA Verification Summary that ``ev``'s image passed (or failed) ``policy``."""
    return {
        "verifier": {"id": VERIFIER_ID, "version": {"valorch": ev.valorch_version}},
        "timeVerified": policy.verified_at,
        "resourceUri": f"{ev.name}@{ev.digest}",
        "policy": {
            "uri": f"valorch:qualify?job={policy.job}&baseline={policy.baseline}",
            "annotations": {
                # the checks with a verdict (those a test result lists)
                CHECKS_JUDGED: sum(v in PASSED + WARNED + FAILED for v in ev.verdicts.values()),
                **provenance(ev),
                **({"acceptedRegressions": list(policy.accepted)} if policy.accepted else {}),
            },
        },
        "verificationResult": "PASSED" if policy.passed else "FAILED",
        "verifiedLevels": ["VALORCH_QUALIFIED"] if policy.passed else [],
        "slsaVersion": "1.0",
    }


def statement(ev: Evidence, predicate_type: str, predicate: Mapping[str, Any]) -> dict[str, Any]:
    """An in-toto Statement v1 about ``ev``'s image digest."""
    algo, _, hexd = ev.digest.partition(":")
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": ev.name, "digest": {algo: hexd}}],
        "predicateType": predicate_type,
        "predicate": dict(predicate),
    }


def payload(doc: Mapping[str, Any]) -> bytes:
    """The bytes that are signed: compact, key-sorted JSON (stable across runs)."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def pae(payload_type: str, body: bytes) -> bytes:
    """DSSE v1 pre-authentication encoding: what the signature is over."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %b %d %b" % (len(kind), kind, len(body), body)


def jsonl(envelopes: Iterable[Mapping[str, Any]]) -> str:
    """``.intoto.jsonl`` as cosign writes it: one DSSE envelope per line."""
    return "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in envelopes)


def subject_matches(doc: Mapping[str, Any], digest: str) -> bool:
    """Whether a Statement names ``digest`` (sha256:<hex>) among its subjects."""
    algo, _, hexd = digest.partition(":")
    subjects = doc.get("subject") if isinstance(doc, Mapping) else None
    return isinstance(subjects, list) and any(
        isinstance(s, Mapping)
        and isinstance(s.get("digest"), Mapping)
        and s["digest"].get(algo) == hexd
        for s in subjects
    )
