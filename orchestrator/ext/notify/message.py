"""What a notification says (pure): the conclusion and the new regressions with their
repro commands, as a Slack message and as a GitHub check run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from orchestrator import encode

SUCCESS, FAILURE, NEUTRAL = "success", "failure", "neutral"
MAX_LISTED = 25
MAX_TEXT = 60_000  # GitHub caps output.text at 65,535 characters


@dataclass(frozen=True)
class Regression:
    env: str
    check: str
    detail: str
    repro: str
    why: str = ""  # its triage class and reason (services/triage.py), e.g. "regression: passed on the previous digest …"


@dataclass(frozen=True)
class Outcome:
    title: str  # e.g. "valorch qualify release against v0.2"
    results: int  # results ingested on the head side
    regressions: tuple[Regression, ...] = ()
    infra: bool = False  # infrastructure errors: the verdict is incomplete
    summary: str = ""
    report: str = ""  # a path or URL to the full report
    decided: str = ""  # the gate's headline ("not qualified: not ready (readiness): …")
    failed: bool = False  # the gate said no (exit 1), with or without a failing cell

    @property
    def conclusion(self) -> str:
        """Zero results is a failure, never a success (conbench/conbench#1191); a regression
        or a gate that said no is a failure; infrastructure trouble alone is neutral."""
        if self.decided:  # the gate's decision, as every other sink renders it
            return FAILURE if self.failed else NEUTRAL if self.infra else SUCCESS
        if self.results == 0 or self.regressions or self.failed:
            return FAILURE
        return NEUTRAL if self.infra else SUCCESS

    def headline(self) -> str:
        if self.results == 0 and not self.decided:
            return f"{self.title}: FAILURE, no results were ingested"
        if self.decided:  # the gate's decision, as every other sink says it
            return f"{self.title}: {self.conclusion.upper()}, {self.decided}"
        if self.regressions:
            n = len(self.regressions)
            return f"{self.title}: FAILURE, {n} new regression{'s' if n != 1 else ''}"
        if self.infra:
            return f"{self.title}: NEUTRAL, infrastructure errors left checks inconclusive"
        return f"{self.title}: success, no regression"

    def lines(self) -> list[str]:
        out = [
            f"- {r.env} `{r.check}`: {r.detail}"
            + (f"\n  why: {r.why}" if r.why else "")
            + f"\n  repro: `{r.repro}`"
            for r in self.regressions[:MAX_LISTED]
        ]
        if len(self.regressions) > MAX_LISTED:
            out.append(f"- … and {len(self.regressions) - MAX_LISTED} more")
        return out


def slack(o: Outcome) -> dict[str, Any]:
    # every field may quote a workload or an export: encoded for mrkdwn as a whole (valorch's
    # own text has no & < >); the report is the operator's own path or URL (--report), kept linkable
    body = "\n".join([o.headline(), *([o.summary] if o.summary else []), *o.lines()])
    report = [f"report: {encode.slack(o.report).replace(encode.ZWSP, '')}"] if o.report else []
    text = "\n".join([encode.slack(body), *report])
    return {
        "text": text[:MAX_TEXT],
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": text[:2900]}}],
    }


def github(o: Outcome, sha: str) -> dict[str, Any]:
    text = "\n".join(o.lines()) or "No new regression."
    md = encode.github_markdown  # summary and text are Markdown GitHub renders; title plain
    return {
        "name": "valorch",
        "head_sha": sha,
        "status": "completed",
        "conclusion": o.conclusion,
        "output": {
            "title": encode.one_line(o.headline())[:250],
            "summary": md(o.summary or o.headline())[:MAX_TEXT],
            "text": md(text + (f"\n\nreport: {o.report}" if o.report else ""))[:MAX_TEXT],
        },
    }
