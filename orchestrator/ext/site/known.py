"""The site's known-issues page: each entry of --known-issues with its scope, whether it has
expired (its expiry date passed: it excuses nothing any more), whether it can close (its
checks passed in every matching environment for N runs over D days, with the evidence, as
`valorch known-issues status` says) and the stored runs it excused."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from markupsafe import Markup

from orchestrator.ext.site import pages
from orchestrator.ext.site.page_data import Site
from orchestrator.services.known_issues_status import IssueStatus


def scope(s: IssueStatus) -> str:
    i = s.issue
    parts = [f"images {i.images}"] if i.images != "*" else []
    parts += [f"backend {i.backend}"] if i.backend else []
    parts += [f"arch {', '.join(i.arch)}"] if i.arch else []
    return "; ".join(parts) or "unscoped (every image, backend and arch)"


def page(site: Site, statuses: Sequence[IssueStatus], today: date, runs: int, days: float) -> str:
    """One row per known issue, in the file's order."""
    return site.list_page(
        "Known issues",
        ("check", "scope", "reason", "expires", "state", "evidence", "runs it excused"),
        (
            (
                Markup(f"<code>{pages.wbr(s.issue.check)}</code>"),
                scope(s),
                s.issue.reason,
                str(s.issue.until) if s.issue.until else "never",
                # expired, can close, or open (an expired one that could close is both)
                Markup(" ").join(
                    pages.badge(x)
                    for x, now in (("expired", s.issue.expired(today)), ("can close", s.can_close))
                    if now
                )
                or pages.badge("open"),
                s.why,
                Markup(", ").join(pages.link(f"runs/{r}.html", r[:8], True) for r in s.excused)
                or Markup("none"),
            )
            for s in statuses
        ),
        intro=(
            f"An issue can close when its checks passed in every matching environment for at "
            f"least {runs} runs over the last {days:g} days; an expired one excuses nothing "
            "(remove it, or extend its expiry)."
        ),
        root="",
    )
