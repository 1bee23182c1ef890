"""``valorch known-issues status``: for each known issue, the stored runs it excused (a check
it names ended in a status it expects, in an environment it scopes) and whether it can close:
every environment of its scope that ran its checks over the last D days, or where they ever
failed, passed in each of at least N runs over those days (as PyTorch re-enables a disabled
test after two weeks green): regression/waivers.closing."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from fnmatch import fnmatchcase
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from ..hostclass import host_class
from ..matrix.model import verdict
from ..regression.waivers import Closing, ScopedRun, Waiver, Waivers, closing
from ..store import queries
from ..store import readiness_queries as rq


@dataclass(frozen=True)
class IssueStatus:
    issue: Waiver
    excused: tuple[str, ...]  # runs where it excused a failure
    closing: Closing  # whether it can close, and why (regression/waivers.closing)

    @property
    def can_close(self) -> bool:
        return self.closing.can_close

    @property
    def why(self) -> str:
        return self.closing.why

    def as_dict(self) -> dict[str, Any]:
        return {
            "check": self.issue.check,
            "images": self.issue.images,
            "backend": self.issue.backend,
            "arch": list(self.issue.arch),
            "reason": self.issue.reason,
            "excused_runs": list(self.excused),
            "recent": {
                k: {"passed": p, "runs": n} for k, (p, n) in sorted(self.closing.recent.items())
            },
            "failed_in": list(self.closing.failed),
            "keeps_open": list(self.closing.short),
            "can_close": self.can_close,
            "why": self.why,
        }


def status(
    factory: sessionmaker[Session],
    issues: Waivers,
    runs: int = 3,
    days: float = 14,
    job: str | None = None,
) -> list[IssueStatus]:
    with factory() as session:
        return status_in(session, issues, runs, days, job)


def status_in(
    session: Session, issues: Waivers, runs: int = 3, days: float = 14, job: str | None = None
) -> list[IssueStatus]:
    """status() in an open session (the site's build reads the store in one)."""
    since = queries.now() - timedelta(days=days)
    rows = rq.job_runs(session, job, None, None)
    per: dict[str, dict[str, list[str]]] = {}
    for run, check, _attempt, st, *_ in rq.results(session, [r["id"] for r in rows]):
        per.setdefault(run, {}).setdefault(check, []).append(st)
    out = []
    for issue in issues.entries:
        excused: list[str] = []
        history: list[ScopedRun] = []
        for row in rows:
            if not issue.in_scope(row["alias"], host_class(row["spec"]), row["backend"]):
                continue
            mine = {
                c: verdict(s)
                for c, s in per.get(row["id"], {}).items()
                if fnmatchcase(c, issue.check)
            }
            if not mine:
                continue
            if any(v in issue.status for v in mine.values()):
                excused.append(row["id"])
            env = f"{row['alias']}@{host_class(row['spec'])}"
            history.append(ScopedRun(env, row["id"], row["started"], tuple(mine.values())))
        decided = closing(issue, history, runs, since, days)
        out.append(IssueStatus(issue, tuple(excused), decided))
    return out
