"""The site's timing steps agree with ``valorch diff``: a step or drift found in a check's
history (regression/changepoints.py) is listed, in "recent changes", on the check page and
as a marker on its trend plot, only where ``valorch diff BEFORE AT`` on the same two stored
runs calls that check's timing slower (or faster): the threshold AND significance of
regression/rule.py, the host's noise and the check's A/A noise included. A jump the diff
calls noise (a busy host, an interval that does not reach the threshold) is not a step."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from sqlalchemy.orm import Session

from orchestrator.errors import InputError
from orchestrator.ext.site.views import ChangeV, History
from orchestrator.services.diff import report_for
from orchestrator.spec import DEFAULT_THRESHOLD, FASTER, SLOWER

_AGREES = {"slower": SLOWER, "faster": FASTER}


@dataclass
class Confirmations:
    """The diff's verdicts on the shifts the histories show (below): those of the
    previous build that nothing since can have changed (``known``), and every one this build
    used (``made``), for the next."""

    known: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    made: dict[str, dict[str, str]] = field(default_factory=dict)


def confirmed(
    session: Session,
    found: Sequence[ChangeV],
    per_check: dict[str, list[History]],
    memo: Confirmations,
) -> list[ChangeV]:
    """The changes the diff of their two runs confirms; the histories' analyses keep only those
    shifts (so the plots mark what the lists say). The diff is not made again for a pair
    whose verdicts ``memo`` knows (an earlier build's, that still hold); every pair's go
    into it for the next build."""
    kinds: dict[tuple[str, str], dict[str, str]] = {}
    keep = []
    for c in found:
        if not c.base_run:
            continue
        pair = (c.base_run, c.run)
        if pair not in kinds:  # each check's change kind in `valorch diff BASE_RUN RUN`
            name = f"{c.base_run}..{c.run}"
            known = memo.known.get(name)
            kinds[pair] = dict(known) if known is not None else _diff(session, pair)
            memo.made[name] = kinds[pair]
        if kinds[pair].get(c.check) == _AGREES[c.direction]:
            keep.append(c)
    ok = {(c.check, c.env, c.run) for c in keep}
    said = {
        (c.check, c.env, c.run): (kinds.get((c.base_run, c.run), {}).get(c.check, ""), c.base_run)
        for c in found
    }
    for hs in per_check.values():
        for h in hs:
            if h.analysis is not None and h.analysis.shifts:
                shifts, rejected = [], []
                for s in h.analysis.shifts:
                    key = (h.check, h.env, h.points[s.end].run_id)
                    if key in ok:
                        shifts.append(s)
                    else:  # the page says what the detector saw and why it is not a step
                        kind, base = said.get(key, ("", ""))
                        rejected.append((s, kind, base))
                h.analysis = replace(h.analysis, shifts=tuple(shifts))
                h.rejected = tuple(rejected)
    return keep


def _diff(session: Session, pair: tuple[str, str]) -> dict[str, str]:
    """Each check's change kind in the diff of the pair (default threshold, each check's own;
    no known issues)."""
    with contextlib.suppress(InputError):  # a side without results: nothing to confirm
        report = report_for(session, *pair, DEFAULT_THRESHOLD, None)
        return {c.check: c.kind for c in report.changes}
    return {}
