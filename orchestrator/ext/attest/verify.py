"""valorch verify: does a signed attestation on the digest an image reference resolves to
hold a requirement? The digest is resolved in the registry, the attestations attached to
it fetched (referrers API and cosign's ``.att`` tag), and each one checked in order:
signature with the given public key over DSSE's PAE, the Statement's subject names this
digest, its age, then the requirement. Exit 0 when one attestation satisfies everything;
1 with every attestation's reason when none does."""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from orchestrator import imageref, netbody
from orchestrator.errors import InputError
from orchestrator.ext.attest import artifacts, intoto, signing
from orchestrator.registry import RegistryClient
from orchestrator.services.outcome import GATE_FAILED, Outcome, passed

REQUIREMENTS = "qualified, passed (every check passed) or passed:CHECK-GLOB"


@dataclass(frozen=True)
class Finding:
    where: str
    predicate_type: str
    ok: bool
    reason: str


@dataclass(frozen=True)
class Verification:
    image: str
    digest: str
    looked: str
    findings: tuple[Finding, ...]

    @property
    def holds(self) -> bool:
        return any(f.ok for f in self.findings)

    @property
    def outcome(self) -> Outcome:
        """Exit 1 when no attestation satisfies the requirement (the lines are the command's)."""
        if self.holds:
            return passed(f"{self.image} satisfies the requirement")
        return Outcome(GATE_FAILED, "not verified", f"no attestation of {self.image} satisfies it")


def parse_requirement(text: str | None) -> tuple[str, str]:
    """("qualified", "") | ("passed", GLOB); GLOB "" means every check."""
    if not text or text == "passed":
        return "passed", ""
    if text == "qualified":
        return "qualified", ""
    kind, sep, glob = text.partition(":")
    if kind == "passed" and sep and glob.strip():
        return "passed", glob.strip()
    raise InputError(f"--require {text}: not a requirement valorch knows", f"use {REQUIREMENTS}")


def parse_age(text: str | None) -> timedelta | None:
    """``30d``, ``12h``, ``90m``, ``3600s`` (or plain seconds)."""
    if not text:
        return None
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    num, unit = (text[:-1], text[-1]) if text[-1:] in units else (text, "s")
    try:
        value = float(num)
    except ValueError:
        value = -1
    if not value > 0:
        raise InputError(f"--max-age {text}: not a duration", "write e.g. 30d, 12h or 3600s")
    if not value * units[unit] <= MAX_AGE_S:  # timedelta holds 999999999 days; nan, inf
        raise InputError(
            f"--max-age {text}: longer than any attestation can be (at most 36500d)",
            "write e.g. 30d, 12h or 3600s",
        )
    return timedelta(seconds=value * units[unit])


#: the longest --max-age: a century (``timedelta`` overflows past 999999999 days)
MAX_AGE_S = 100 * 365 * 86400


def _judge(
    statement: Any,
    digest: str,
    requirement: tuple[str, str],
    max_age: timedelta | None,
    signed_at: datetime | None,
    now: datetime,
) -> tuple[bool, str]:
    if not isinstance(statement, dict) or statement.get("_type") != intoto.STATEMENT_TYPE:
        return False, "not an in-toto Statement v1"
    if not intoto.subject_matches(statement, digest):
        names = [s.get("digest") for s in statement.get("subject") or [] if isinstance(s, dict)]
        return False, f"subject mismatch: the statement is about {str(names)[:300]}, not {digest}"
    ptype = statement.get("predicateType")
    raw_pred = statement.get("predicate")
    pred: dict[str, Any] = raw_pred if isinstance(raw_pred, dict) else {}
    if max_age is not None:
        when = _time(pred.get("timeVerified")) if ptype == intoto.VSA else signed_at
        if when is None:
            return False, "expired: the attestation carries no time to check --max-age against"
        if now - when > max_age:
            return (
                False,
                f"expired: made {when:%Y-%m-%d %H:%M} UTC, older than --max-age ({max_age})",
            )
    kind, glob = requirement
    if kind == "qualified":
        if ptype != intoto.VSA:
            return False, f"not a verification summary ({ptype})"
        if pred.get("verificationResult") != "PASSED":
            return (
                False,
                f"qualification {pred.get('verificationResult')} ({(pred.get('policy') or {}).get('uri')})",
            )
        return True, f"qualified ({(pred.get('policy') or {}).get('uri')})"
    if ptype != intoto.TEST_RESULT:
        return False, f"not a test-result attestation ({ptype})"
    passed = [c for c in pred.get("passedTests") or [] if isinstance(c, str)]
    others = [
        c for k in ("failedTests", "warnedTests") for c in pred.get(k) or [] if isinstance(c, str)
    ]
    if not glob:
        if pred.get("result") != "PASSED":
            return (
                False,
                f"result {pred.get('result')}: failed {', '.join(others[:10]) or 'none listed'}",
            )
        return True, f"PASSED ({len(passed)} checks)"
    hit = [c for c in passed if fnmatch.fnmatchcase(c, glob)]
    bad = [c for c in others if fnmatch.fnmatchcase(c, glob)]
    if bad:
        return False, f"checks matching {glob} did not pass: {', '.join(bad[:10])}"
    if not hit:
        return False, f"no passed check matches {glob}"
    return True, f"{len(hit)} checks matching {glob} passed"


def _time(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def verify(
    image: str,
    key: Path,
    *,
    require: str | None = None,
    max_age: str | None = None,
    client: RegistryClient | None = None,
    now: datetime | None = None,
) -> Verification:
    requirement = parse_requirement(require)
    age = parse_age(max_age)
    pub = signing.public_key(key)  # bad input first: exit 2 before the network
    ref = imageref.parse(image)
    client = client or RegistryClient()
    digest = client.resolve(ref).digest
    found, looked = artifacts.fetch(client, ref, digest)
    if not found:
        raise NotAttestedError(
            f"{ref} ({digest}) has no attestations (looked at the {looked})",
            "attest and push it: valorch attest --run RUN --key key.pem --push",
        )
    now = now or datetime.now(timezone.utc)
    findings = []
    for where, raw in found:
        try:
            envelope = netbody.loads(raw, netbody.ATTESTATION)
        except ValueError as exc:
            why = "not JSON" if type(exc) is json.JSONDecodeError else str(exc)
            findings.append(Finding(where, "", False, f"malformed envelope ({why})"))
            continue
        checked = signing.check(envelope, pub)
        if not checked.ok:
            findings.append(Finding(where, "", False, checked.reason))
            continue
        try:
            statement = netbody.loads(checked.payload, netbody.ATTESTATION)
        except ValueError:
            findings.append(Finding(where, "", False, "the signed payload is not JSON"))
            continue
        ok, reason = _judge(
            statement, digest, requirement, age, _pushed_time(envelope, statement), now
        )
        ptype = statement.get("predicateType", "") if isinstance(statement, dict) else ""
        findings.append(Finding(where, str(ptype)[:200], ok, reason[:500]))
    return Verification(str(ref), digest, looked, tuple(findings))


def _pushed_time(envelope: Any, statement: Any) -> datetime | None:
    """When a test-result attestation was made: valorch writes it into the configuration's
    annotations (``attestedAt``), inside the signed payload."""
    pred = statement.get("predicate") if isinstance(statement, dict) else None
    for conf in (pred or {}).get("configuration") or []:
        if isinstance(conf, dict):
            t = _time((conf.get("annotations") or {}).get("attestedAt"))
            if t:
                return t
    return None


class NotAttestedError(InputError):
    """verify of an image with no attestation at all: bad input (exit 2), not a failed check."""
