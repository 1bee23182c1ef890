"""The sinks of ``valorch verify``: the terminal lines, the JSON document and the exit code,
each rendered from the one ``policy.Decision`` and nothing else."""

from __future__ import annotations

from typing import Any

from orchestrator.ext.attest.policy import Decision
from orchestrator.services.outcome import GATE_FAILED, Outcome, passed

#: the listing's word for each role
ROLE = {"decides": "DECIDES", "superseded": "older", "duplicate": "copy"} | {
    r: r for r in ("tied", "undated", "undecided", "ignored", "rejected")
}


def verdict_line(d: Decision) -> str:
    if d.holds:
        return (
            f"verified: {d.image} ({d.digest}) satisfies --require {d.require}: the newest "
            f"attestation ({d.decided_by}) holds it"
        )
    return (
        f"not verified: {d.image} ({d.digest}) does not satisfy --require {d.require}: "
        + "; ".join(r.text for r in d.reasons)
    )


def lines(d: Decision) -> list[tuple[str, str]]:
    """``(stream, text)`` in order: one line per attestation (stderr), then the verdict
    (stdout when it holds, stderr when it does not)."""
    out = []
    for a in d.attestations:
        kind = a.predicate_type.rsplit("/", 2)[-2] if a.predicate_type.count("/") >= 2 else "?"
        when = f" signed {a.signed_at}" if a.signed_at else ""
        prov = f" [{a.provenance}]" if a.provenance and a.provenance != "measured" else ""
        out.append(("err", f"  {ROLE[a.role]:<9} {a.where} {kind}{when}{prov}: {a.summary}"))
    out.append(("out" if d.holds else "err", verdict_line(d)))
    return out


def as_json(d: Decision) -> dict[str, Any]:
    return {
        "image": d.image,
        "digest": d.digest,
        "require": d.require,
        "looked": d.looked,
        "holds": d.holds,
        "verdict": "verified" if d.holds else "not verified",
        "exit_code": d.exit_code,
        "decided_by": d.decided_by or None,
        "reasons": [{"code": r.code, "text": r.text} for r in d.reasons],
        "attestations": [
            {
                "where": a.where,
                "predicateType": a.predicate_type,
                "role": a.role,
                "signedAt": a.signed_at or None,
                "provenance": a.provenance or None,
                "summary": a.summary,
            }
            for a in d.attestations
        ],
    }


def outcome(d: Decision) -> Outcome:
    """The exit code: 0 when the decision holds, 1 when it does not (the lines are above)."""
    if d.holds:
        return passed(f"{d.image} satisfies --require {d.require}")
    return Outcome(GATE_FAILED, "not verified", verdict_line(d))
