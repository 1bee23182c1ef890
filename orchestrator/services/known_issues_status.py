"""``valorch known-issues status``: for each known issue, the stored runs it excused (a check
it names ended in a status it expects, in an environment it scopes) and whether it can close:
its checks passed in every matching environment for at least N runs over the last D days,
with no failure there (as PyTorch re-enables a disabled test after two weeks green)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from fnmatch import fnmatchcase
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from ..hosts.match import host_class
from ..matrix.model import verdict
from ..regression.known_issues import KnownIssue, KnownIssues
from ..store import queries
from ..store import readiness_queries as rq


@dataclass(frozen=True)
class IssueStatus:
    issue: KnownIssue
    excused: tuple[str, ...]  # runs where it excused a failure
    recent: dict[str, tuple[int, int]]  # environment -> (runs passing, runs) over the last D days
    can_close: bool
    why: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "check": self.issue.check,
            "images": self.issue.images,
            "backend": self.issue.backend,
            "arch": list(self.issue.arch),
            "reason": self.issue.reason,
            "excused_runs": list(self.excused),
            "recent": {k: {"passed": p, "runs": n} for k, (p, n) in sorted(self.recent.items())},
            "can_close": self.can_close,
            "why": self.why,
        }


def _in_scope(issue: KnownIssue, row: dict[str, Any]) -> bool:
    return (
        fnmatchcase(row["alias"], issue.images)
        and (issue.backend is None or issue.backend == row["backend"])
        and issue.on_arch(host_class(row["spec"]))
    )


def status(
    factory: sessionmaker[Session],
    issues: KnownIssues,
    runs: int = 3,
    days: float = 14,
    job: str | None = None,
) -> list[IssueStatus]:
    with factory() as session:
        return status_in(session, issues, runs, days, job)


def status_in(
    session: Session,
    issues: KnownIssues,
    runs: int = 3,
    days: float = 14,
    job: str | None = None,
) -> list[IssueStatus]:
    """status() in an open session (the site's build reads the store in one)."""
    since = queries.now() - timedelta(days=days)
    rows = rq.job_runs(session, job, None, None)
    per: dict[str, dict[str, list[str]]] = {}
    for run, check, _attempt, st in rq.statuses(session, [r["id"] for r in rows]):
        per.setdefault(run, {}).setdefault(check, []).append(st)
    out = []
    for issue in issues.entries:
        excused: list[str] = []
        recent: dict[str, list[bool]] = {}
        for row in rows:
            if not _in_scope(issue, row):
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
            if row["started"] >= since:
                env = f"{row['alias']}@{host_class(row['spec'])}"
                recent.setdefault(env, []).append(all(v == "pass" for v in mine.values()))
        counts = {e: (sum(v), len(v)) for e, v in recent.items()}
        short = {e: c for e, c in counts.items() if c[0] < c[1] or c[1] < runs}
        can = bool(counts) and not short
        if not counts:
            why = f"no run of its checks in its scope in the last {days:g} days"
        elif short:
            why = "; ".join(
                f"{e}: {p}/{n} passed" + (f" (needs {runs})" if n < runs else "")
                for e, (p, n) in sorted(short.items())
            )
        else:
            why = (
                f"its checks passed in every run of every matching environment over the last "
                f"{days:g} days ("
                + ", ".join(f"{e}: {n} runs" for e, (_p, n) in sorted(counts.items()))
                + ")"
            )
        out.append(IssueStatus(issue, tuple(excused), counts, can, why))
    return out
