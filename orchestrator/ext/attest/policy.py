"""What ``valorch verify`` decides, once, from attestations already fetched and decoded
(docs/attestations.md, "How verify decides"). Pure: no registry, no clock, no key.

The rule, in order:

1. An attestation counts only when its envelope verifies with the key, it is an in-toto
   Statement v1 and its subject names this digest; any other is ``rejected`` (listed, never
   deciding either way).
2. The requirement reads one predicate type (``qualified``: the SLSA VSA; ``passed``: the
   test result); the others are ``ignored``.
3. Of those left, the newest by its signed time (the VSA's ``timeVerified``, the test
   result's ``attestedAt``) ``decides``; the older ones are ``superseded``. Copies of one
   signed statement count once. Two different statements at the newest time, or one without
   a signed time, decide nothing: the verdict is no (fail closed) and says why.
4. The one that decides must be fresh enough (``--max-age``), measured by valorch (not
   imported, unless ``--allow-imported``), and meet the requirement, having judged at least
   one check.
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Literal

from orchestrator.ext.attest import intoto

Role = Literal[
    "decides", "superseded", "tied", "undated", "undecided", "duplicate", "ignored", "rejected"
]

#: what the requirement kinds read
READS = {"qualified": intoto.VSA, "passed": intoto.TEST_RESULT}
NOUN = {"qualified": "verification summary (VSA)", "passed": "test result"}


@dataclass(frozen=True)
class Decoded:
    """One attestation as fetched: why it cannot be read, or its statement and signed bytes."""

    where: str
    statement: Any = None
    payload: bytes = b""
    problem: str = ""


@dataclass(frozen=True)
class Reason:
    """Why the verdict is no: a code (for programs, the oracle) and the sentence."""

    code: str
    text: str


@dataclass(frozen=True)
class Considered:
    """One attestation as the decision saw it."""

    where: str
    predicate_type: str
    role: Role
    signed_at: str  # RFC 3339, "" when it carries none
    provenance: str  # "measured", "imported: …", "not stated", "" (not read)
    summary: str  # what it says, or why it was rejected


@dataclass(frozen=True)
class Decision:
    """verify's answer: every sink (exit code, terminal, JSON) renders this and nothing else."""

    image: str
    digest: str
    require: str
    looked: str
    reasons: tuple[Reason, ...]
    attestations: tuple[Considered, ...]
    decided_by: str = ""  # where the attestation that decides was found

    @property
    def holds(self) -> bool:
        return not self.reasons

    @property
    def exit_code(self) -> int:
        return 0 if self.holds else 1


def signed_time(statement: Mapping[str, Any]) -> datetime | None:
    """The time inside the signed statement: a VSA's ``timeVerified``, a test result's
    ``attestedAt`` (configuration annotations)."""
    pred = statement.get("predicate")
    if not isinstance(pred, Mapping):
        return None
    if statement.get("predicateType") == intoto.VSA:
        return _time(pred.get("timeVerified"))
    for conf in pred.get("configuration") or []:
        if isinstance(conf, Mapping) and isinstance(conf.get("annotations"), Mapping):
            t = _time(conf["annotations"].get("attestedAt"))
            if t is not None:
                return t
    return None


def _time(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def _annotations(statement: Mapping[str, Any]) -> Mapping[str, Any]:
    pred = statement.get("predicate")
    if not isinstance(pred, Mapping):
        return {}
    if statement.get("predicateType") == intoto.VSA:
        policy = pred.get("policy")
        ann = policy.get("annotations") if isinstance(policy, Mapping) else None
        return ann if isinstance(ann, Mapping) else {}
    for conf in pred.get("configuration") or []:
        if isinstance(conf, Mapping) and isinstance(conf.get("annotations"), Mapping):
            return conf["annotations"]
    return {}


def provenance(statement: Mapping[str, Any]) -> str:
    """``measured`` (valorch ran the checks), ``imported: FROM`` (results measured elsewhere
    and imported) or ``not stated`` (an attestation without the signed field)."""
    ann = _annotations(statement)
    said = ann.get(intoto.PROVENANCE)
    if said == "measured":
        return "measured"
    if said == "imported":
        return f"imported: {str(ann.get(intoto.IMPORTED_FROM) or 'source not named')[:300]}"
    return "not stated"


def _tests(pred: Mapping[str, Any], key: str) -> list[str]:
    raw = pred.get(key)
    return [c for c in raw if isinstance(c, str)] if isinstance(raw, list) else []


def summary(statement: Mapping[str, Any]) -> str:
    """What one attestation says, in a line."""
    raw = statement.get("predicate")
    pred: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    if statement.get("predicateType") == intoto.VSA:
        judged = _annotations(statement).get(intoto.CHECKS_JUDGED)
        policy = pred.get("policy")
        uri = policy.get("uri") if isinstance(policy, Mapping) else ""
        n = f"{judged} checks judged" if _count(judged) is not None else "checks judged not stated"
        return f"qualification {pred.get('verificationResult')} ({uri}; {n})"[:500]
    if statement.get("predicateType") == intoto.TEST_RESULT:
        p, w, f = (len(_tests(pred, k)) for k in ("passedTests", "warnedTests", "failedTests"))
        return f"result {pred.get('result')}: {p} passed, {w} warned, {f} failed"
    return f"predicate {str(statement.get('predicateType'))[:200]}"


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _usable(att: Decoded, digest: str) -> str:
    """Why ``att`` cannot count ("" when it can)."""
    if att.problem:
        return att.problem
    st = att.statement
    if not isinstance(st, Mapping) or st.get("_type") != intoto.STATEMENT_TYPE:
        return "not an in-toto Statement v1"
    if not intoto.subject_matches(st, digest):
        names = [s.get("digest") for s in st.get("subject") or [] if isinstance(s, Mapping)]
        return f"subject mismatch: the statement is about {str(names)[:300]}, not {digest}"
    return ""


def decide(  # noqa: PLR0913  # keyword-only: what verify was asked, and what it found
    attestations: Sequence[Decoded],
    *,
    image: str,
    digest: str,
    requirement: tuple[str, str],
    require: str,
    looked: str = "",
    max_age: timedelta | None = None,
    now: datetime,
    allow_imported: bool = False,
) -> Decision:
    """The one decision of ``valorch verify`` (module docstring: the rule)."""
    kind, glob = requirement
    wanted = READS[kind]
    rows, candidates = _sorted(attestations, digest, wanted)
    reasons: list[Reason] = []
    decider: int | None = None
    short = NOUN[kind]
    undated = [i for i, w in candidates if w is None]
    dated = [(i, w) for i, w in candidates if w is not None]
    newest = max((w for _, w in dated), default=None)
    top = [i for i, w in dated if w == newest]
    untold = "which is newest cannot be told, so none decides"
    if not candidates:
        why = f"no signed {NOUN[kind]} about {digest} counts: --require {require} reads {wanted}"
        reasons.append(Reason("none", why))
    elif undated:
        why = f"{len(undated)} {short} attestation(s) carry no signed time: {untold}"
        reasons.append(Reason("undated", why))
    elif len(top) > 1:
        why = f"{len(top)} different {short} attestations share the newest signed time"
        reasons.append(Reason("tie", f"{why} {_show(newest)}: {untold}"))
    else:
        decider = top[0]
    for i, when in candidates:
        att = attestations[i]
        st = att.statement
        role: Role
        if i == decider:
            role = "decides"
        elif when is None:
            role = "undated"
        elif undated:  # no decider: which of them is newest is not known
            role = "undecided"
        elif decider is None and i in top:
            role = "tied"
        else:  # older than the one that decides (or than those tied for newest)
            role = "superseded"
        rows[i] = Considered(att.where, wanted, role, _show(when), provenance(st), summary(st))
    if decider is not None:
        reasons += _judge(
            attestations[decider].statement, kind, glob, max_age, now, allow_imported, require
        )
    by = attestations[decider].where if decider is not None else ""
    shown = tuple(r for r in rows if r is not None)
    return Decision(image, digest, require, looked, tuple(reasons), shown, by)


def _sorted(
    attestations: Sequence[Decoded], digest: str, wanted: str
) -> tuple[list[Considered | None], list[tuple[int, datetime | None]]]:
    """Each attestation rejected, ignored (another predicate), a duplicate, or a candidate
    (its index and signed time); a candidate's row is filled once the decider is known."""
    rows: list[Considered | None] = [None] * len(attestations)
    candidates: list[tuple[int, datetime | None]] = []
    first_of: dict[bytes, int] = {}
    for i, att in enumerate(attestations):
        why = _usable(att, digest)
        st = att.statement if isinstance(att.statement, Mapping) else {}
        ptype = str(st.get("predicateType") or "")[:200] if not att.problem else ""
        row = functools.partial(Considered, att.where, ptype)
        if why:
            rows[i] = row("rejected", "", "", why[:500])
            continue
        when = signed_time(st)
        if ptype != wanted:
            rows[i] = row("ignored", _show(when), provenance(st), summary(st))
            continue
        if att.payload in first_of:  # the same signed statement again (another copy)
            same = attestations[first_of[att.payload]].where
            rows[i] = row(
                "duplicate", _show(when), provenance(st), f"the same signed statement as {same}"
            )
            continue
        first_of[att.payload] = i
        candidates.append((i, when))
    return rows, candidates


def _show(when: datetime | None) -> str:
    return when.isoformat().replace("+00:00", "Z") if when else ""


def _judge(
    st: Mapping[str, Any],
    kind: str,
    glob: str,
    max_age: timedelta | None,
    now: datetime,
    allow_imported: bool,
    require: str,
) -> list[Reason]:
    """Why the attestation that decides does not hold (empty: it holds)."""
    out: list[Reason] = []

    def fails(code: str, why: str) -> None:
        out.append(Reason(code, why))

    when = signed_time(st)
    assert when is not None  # the decider has a signed time
    if max_age is not None and now - when > max_age:
        fails(
            "expired",
            f"expired: the newest attestation was made {when:%Y-%m-%d %H:%M} UTC, older "
            f"than --max-age ({max_age})",
        )
    prov = provenance(st)
    if prov.startswith("imported") and not allow_imported:
        fails(
            "imported",
            f"not measured by valorch ({prov}): its results were run elsewhere and "
            "imported; pass --allow-imported to accept that knowingly",
        )
    elif prov != "measured" and not allow_imported:
        fails(
            "provenance",
            "it does not say where its results were measured (made before valorch signed "
            "its provenance): attest again, or pass --allow-imported to accept it knowingly",
        )
    raw = st.get("predicate")
    pred: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    if kind == "qualified":
        result = pred.get("verificationResult")
        if result != "PASSED":
            fails("result", f"the newest qualification is {result}, not PASSED")
        judged = _count(_annotations(st).get(intoto.CHECKS_JUDGED))
        if not judged:
            fails(
                "nothing judged",
                "the newest qualification judged no checks"
                if judged == 0
                else "the newest qualification does not say how many checks it judged "
                "(attest the qualification again with this valorch)",
            )
        return out
    passed, warned, failed = (
        _tests(pred, k) for k in ("passedTests", "warnedTests", "failedTests")
    )
    if not glob:
        if pred.get("result") != "PASSED" or warned or failed:
            pairs = (("failed", failed), ("warned", warned))
            listed = "; ".join(f"{what} {', '.join(names[:10])}" for what, names in pairs if names)
            listed = listed or "no failed or warned check listed"
            fails("result", f"the newest test result is {str(pred.get('result'))[:20]}: {listed}")
        if not passed:
            fails(
                "no tests",
                "the newest test result lists no passed check (0 checks: every check was "
                f"skipped, unsupported or not run): --require {require} needs one that ran",
            )
        return out
    bad = [c for c in failed + warned if fnmatch.fnmatchcase(c, glob)]
    if bad:
        fails("result", f"checks matching {glob} did not pass: {', '.join(bad[:10])}")
    if not any(fnmatch.fnmatchcase(c, glob) for c in passed):
        fails("no tests", f"no passed check matches {glob} in the newest test result")
    return out
