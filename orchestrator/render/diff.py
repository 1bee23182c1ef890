"""A regression Report → Markdown, HTML (jinja2, autoescaped, standalone), JSON, JUnit XML.

Renderers return strings; the CLI writes them.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree as ET

from jinja2 import Environment, FileSystemLoader, select_autoescape

from .. import encode
from ..spec import (
    CHANGED,
    COUNTED,
    COVERAGE_GAINED,
    COVERAGE_LOST,
    EXPECTED,
    FAILING,
    FASTER,
    FIXED,
    FLAKY,
    NEW_FAILURE,
    NOISE,
    NOT_COMPARABLE,
    NOT_EXERCISED,
    REGRESSED,
    SAME,
    SLOWER,
)
from ..spec import INCONCLUSIVE_CHANGE as INCONCLUSIVE
from ..words import count, cut
from .badges import badge
from .breaks import wbr
from .junit import class_part, counted, written
from .sides import own_aliases, paired_names
from .style import CSS as PAGE_CSS
from .waivers import as_dict, said

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..regression.gate import Verdict
    from ..regression.rule import CellChange, Report, Side
    from ..regression.triage import Triage

    #: each red cell's triage by (head image alias, check id) (services.triage.for_runs)
    Why = Mapping[tuple[str, str], Triage]

SECTIONS = (
    ("Status regressions", (REGRESSED, NEW_FAILURE)),
    ("Performance changes", (SLOWER, FASTER, NOISE)),
    ("Fixes", (FIXED,)),
    ("Expected failures (waived)", (EXPECTED,)),
    ("Flaky", (FLAKY,)),
    ("Inconclusive", (INCONCLUSIVE,)),
    ("Coverage", (COVERAGE_LOST, COVERAGE_GAINED)),
    ("Not comparable (check version changed)", (NOT_COMPARABLE,)),
    ("Other status changes", (CHANGED,)),
)


def _sorted(report: Report, kinds: tuple[str, ...]) -> list[CellChange]:
    rows = [c for c in report.changes if c.kind in kinds]
    if any(k in (SLOWER, FASTER, NOISE) for k in kinds):
        rows.sort(key=lambda c: -(c.timing.ratio if c.timing else 1.0))
    return rows


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"


def pct(ratio: float) -> str:
    return f"{(ratio - 1) * 100:+.1f} %"


def _timing_text(c: CellChange) -> str:
    t = c.timing
    if t is None:
        return ""
    sig = (
        f"p={t.p:.2g}"
        if t.p is not None
        else ("99 % CIs apart" if t.significant else "99 % CIs overlap")
    )
    if t.q is not None and t.p is not None:
        sig += f", q={t.q:.2g}"
    pooled = f" in {t.runs_base}/{t.runs_head} runs" if max(t.runs_base, t.runs_head) > 1 else ""
    # the CV of each side and the smallest change the pair can reveal
    noise = ""
    if t.cv_base is not None and t.cv_head is not None:
        noise += f", CV {t.cv_base * 100:.1f} %/{t.cv_head * 100:.1f} %"
    if t.detectable is not None:
        noise += f", detects ≥ {t.detectable * 100:.1f} %"
    if t.noisy:
        noise += ", noisy host"
    return (
        f"{_ms(t.base_median)} → {_ms(t.head_median)} ({pct(t.ratio)}, {sig}, n={t.n_base}/{t.n_head}{pooled}"
        f"{noise})"
    )


def _pct_or_dash(x: float | None) -> str:
    return "—" if x is None else f"{x * 100:.1f} %"


def noise_rows(report: Report) -> list[tuple[str, str, str, str, str, str, bool]]:
    """Every timed check of the report: (environment, check, CV base, CV head, run-to-run
    noise, smallest detectable change, noisy host), changed or not."""
    return [
        (
            c.env,
            c.check,
            _pct_or_dash(c.timing.cv_base),
            _pct_or_dash(c.timing.cv_head),
            _pct_or_dash(c.timing.run_sigma),
            _pct_or_dash(c.timing.detectable),
            c.timing.noisy,
        )
        for c in report.changes
        if c.timing is not None
    ]


def header(report: Report) -> dict[str, Any]:
    def side(s: Side) -> dict[str, Any]:
        return {
            "label": s.label,
            "kind": s.kind,
            "runs": list(s.runs),
            "environments": list(own_aliases(s.envs, "base" if s is report.base else "head")),
            "paired": list(paired_names(s.envs)),
            "digests": dict(s.digests),
            "hosts": list(s.hosts),
        }

    return {
        "base": side(report.base),
        "head": side(report.head),
        "threshold": report.threshold,
        "counts": {("unchanged" if k == SAME else k): v for k, v in sorted(report.counts.items())},
        "regressed": report.regressed,
        "noisy_host": sum(1 for c in report.changes if c.timing is not None and c.timing.noisy),
        "expired_issues": [as_dict(i) for i in report.expired],
    }


def _md_cell(text: str) -> str:
    return encode.markdown(str(text))


def _code(text: str) -> str:
    return encode.markdown_code(str(text))


def _why(why: Why | None, c: CellChange) -> Triage | None:
    """The triage of a red cell (services.triage.for_runs: (image alias, check) -> Triage), or None."""
    return (why or {}).get((c.env.split(" → ")[-1], c.check)) if c.head in RED else None


def why_text(why: Why | None, c: CellChange) -> str:
    t = _why(why, c)
    return f"why: {t.cls}: {t.reason}" if t is not None else ""


GATE_SECTIONS = (
    ("Failures", ("still_failing", "failing")),
    ("Regressions", ("slower",)),
    ("Coverage lost", ("coverage_lost",)),
)


def gate_note(code: str, c: CellChange, allowed_by: str = "") -> str:
    """What the gate says of one of its cells: "regressed", "new failure", "still failing",
    "failing, not comparable (definition changed)", "coverage lost", ", not gated: FLAG"."""
    if code == "failing":
        said = {REGRESSED: "regressed", NEW_FAILURE: "new failure"}.get(c.kind, "failing")
        if c.kind == NOT_COMPARABLE:
            what = "definition" if c.note.startswith("definition") else "check version"
            said = f"failing, not comparable ({what} changed)"
    else:
        said = code.replace("_", " ")
    return said + (f", not gated: {allowed_by}" if allowed_by else "")


def verdict_rows(verdict: Verdict) -> list[tuple[str, list[tuple[CellChange, str]]]]:
    """The gate's sections (failures, still failing first; regressions; coverage lost), each
    row with what the gate says of it ("still failing", "not gated: --allow-known-failures")."""
    out = []
    for title, codes in GATE_SECTIONS:
        rows = [
            (c, gate_note(r.code, c, "" if r.gates else r.allowed_by))
            for code in codes
            for r in verdict.reasons
            if r.code == code
            for c in r.changes
        ]
        if rows:
            out.append((title, rows))
    return out


def gate_mark(gate_said: str) -> str:
    """The symbol of a gate row from what the gate said of it: every failure the failure
    symbol, whatever its change kind."""
    if gate_said.startswith("coverage lost"):
        return "−"
    return "▼" if gate_said.startswith("slower") else "❌"


def count_words(report: Report, verdict: Verdict | None = None) -> str:
    """The report's counts in words ("failing 1, new failure 1, unchanged 16"): with a
    verdict its failing count first (the number that decided), then every change kind."""
    kinds = ", ".join(f"{kind_word(k)} {v}" for k, v in sorted(report.counts.items()))
    failing = f"failing {verdict.counts.failing}" if verdict is not None else ""
    return ", ".join(x for x in (failing, kinds) if x) or "nothing compared"


def kind_word(kind: str) -> str:
    """A change kind as a person reads it ("coverage gained", never ``coverage_gained``)."""
    return KIND_WORDS.get(kind, kind.replace("_", " "))


KIND_WORDS = {SAME: "unchanged", EXPECTED: "excused (waived)", NOISE: "~ not significant"}


def verdict_md(report: Report, verdict: Verdict, why: Why | None = None) -> list[str]:
    """The verdict block: qualified or not and why, in one screen (counts per reason, the first check ids)."""
    word = ("✅ " if verdict.qualified else "❌ ") + verdict.word
    lines = [f"## Verdict: {word}", "", f"**{verdict.why()}** (exit {verdict.exit_code})", ""]
    lines += [f"- {'❌' if r.gates else '◻'} {_md_cell(r.line())}" for r in verdict.reasons]
    if verdict.excused:
        lines.append(f"- ⚑ {verdict.excused} excused by waivers (listed below, folded)")
    lines.append(f"- counts: {verdict.counts.said()}")
    if verdict.infra_errors:
        lines.append("- ⚠️ infrastructure errors: the affected checks are inconclusive")
    lines.append("")
    for title, rows in verdict_rows(verdict):
        lines += _md_table(
            f"{title} ({len(rows)})",
            "| | environment | check | base | head | gate | detail |",
            [
                _md_row(
                    (gate_mark(n), c.env, c.check, c.base or "—", c.head or "—", n, detail(c, why))
                )
                for c, n in rows
            ],
        )
    return lines


def _md_table(title: str, head: str, rows: list[str]) -> list[str]:
    """A titled Markdown table: ``head`` its header row, ``rows`` its rows, as written;
    nothing where there are no rows."""
    if not rows:
        return []
    return [f"## {title}", "", head, "|" + "---|" * (head.count("|") - 1), *rows, ""]


def _md_row(cells: Iterable[str]) -> str:
    """A table row of ``cells`` escaped, the third (a check id) as code."""
    return (
        "| " + " | ".join(_code(x) if i == 2 else _md_cell(x) for i, x in enumerate(cells)) + " |"
    )


def detail(c: CellChange, why: Why | None) -> str:
    """A cell's detail: its timing (or note), then why it is red."""
    return " — ".join(x for x in (_timing_text(c) or c.note, why_text(why, c)) if x)


def _md_sides(report: Report, verdict: Verdict | None = None) -> list[str]:
    """What was compared (base and head side by side), the thresholds, the counts."""
    base, head = report.base, report.head
    return [
        "| | base | head |",
        "|---|---|---|",
        f"| what | {base.kind_shown} {_code(base.label)} | {head.kind_shown} {_code(head.label)} |",
        f"| environments | {', '.join(own_aliases(base.envs, 'base'))} "
        f"| {', '.join(own_aliases(head.envs, 'head'))} |",
        *(f"| paired | {p} | |" for p in paired_names(head.envs)),
        f"| digests | {'<br>'.join(f'{e}: {_code(d)}' for e, d in base.digests) or '—'} "
        f"| {'<br>'.join(f'{e}: {_code(d)}' for e, d in head.digests) or '—'} |",
        f"| hosts | {', '.join(base.hosts) or '—'} | {', '.join(head.hosts) or '—'} |",
        f"| runs | {len(base.runs)} | {len(head.runs)} |",
        "",
        f"Thresholds: timing ratio > {report.threshold * 100:g} % (or the check's own) and significant "
        "(Mann–Whitney U p < 0.01 with ≥ 10 samples a side, else non-overlapping 99 % bootstrap intervals).",
        "Significance is Benjamini–Hochberg controlled over the report's timed checks (q < 0.05); "
        "each timing shows its noise (CV) and the smallest change it can reveal.",
        "",
        "Counts: " + count_words(report, verdict),
        "",
    ]


def _md_change_row(c: CellChange, why: Why | None) -> str:
    row = _md_row((c.mark, c.env, c.check, c.base or "—", c.head or "—", detail(c, why)))
    link = encode.href(c.issue.url) if c.issue else None
    if link:  # valorch's own link, after the encoding of the text (which defuses links)
        row = row.removesuffix(" |") + f" ([link](<{link}>)) |"
    return row


_MD_LEGEND = (
    "Legend: ❌ regressed or new failure (a new check that fails) · ▼ slower · ▲ faster · ~ over the threshold, not significant (not counted) "
    "· ✅ fixed · ⁇ flaky or inconclusive · ⚑ waived · − coverage lost · + coverage gained "
    "· x not comparable"
)


def diff_md(report: Report, verdict: Verdict | None = None, why: Why | None = None) -> str:
    """``verdict`` (regression/gate.py's): the report opens with it, its failures, regressions and
    lost coverage, and folds the rest in ``<details>``. ``why``: each red cell's triage."""
    title = "Qualification" if verdict is not None else "Regression diff"  # a gate's report
    lines = [f"# {title}: {report.base.label} → {report.head.label}", ""]
    shown: set[int] = set()
    if verdict is not None:
        lines += verdict_md(report, verdict, why)
        shown = {id(c) for r in verdict.reasons for c in r.changes}
        lines += [
            "<details><summary>Everything else: sides, thresholds, every other change, noise</summary>",
            "",
        ]
    else:
        lines += [f"Verdict: {'**REGRESSED**' if report.regressed else 'no regression'}", ""]
    lines += _md_sides(report, verdict)
    if noisy := header(report)["noisy_host"]:
        lines += [
            f"⚠️ **noisy host**: {count(noisy, 'timed check')} ran while the host was busy; their timing "
            "changes are shown (~), not counted.",
            "",
        ]
    for issue in report.expired:  # the waivers that expired
        lines.append(f"- ⚠️ waiver {_code(issue.check)} expired on {issue.until}: {issue.reason}")
    if report.expired:
        lines.append("")
    for title, kinds in SECTIONS:  # without the changes the verdict already showed
        rows = [_md_change_row(c, why) for c in _sorted(report, kinds) if id(c) not in shown]
        lines += _md_table(
            f"{title} ({len(rows)})", "| | environment | check | base | head | detail |", rows
        )
    lines += _md_table(
        f"Matrix cell flips ({len(report.flips)})",
        "| environment | check | base | head |",
        [f"| {_md_cell(f.env)} | {_code(f.check)} | {f.base} | {f.head} |" for f in report.flips],
    )
    lines += _md_table(
        "Geometric-mean timing ratio (head/base, > 1 is worse)",
        "| environment | backend | ratio | checks |",
        [
            f"| {_md_cell(e)} | {b or '—'} | {r:.3f} ({pct(r)}) | {n} |"
            for e, b, r, n in report.geomean
        ],
    )
    noise = noise_rows(report)
    lines += _md_table(
        f"Noise per timed check ({len(noise)})",
        "| environment | check | CV base | CV head | run-to-run (A/A) | smallest detectable | host |",
        [
            f"| {_md_cell(e)} | {_code(k)} | {cb} | {ch} | {rs} | {d} | {'noisy' if n else 'quiet'} |"
            for e, k, cb, ch, rs, d, n in noise
        ],
    )
    if verdict is not None:
        lines += ["</details>", ""]
    lines.append(_MD_LEGEND)
    return "\n".join(lines) + "\n"


def _finite(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


def gate_json(verdict: Verdict) -> dict[str, Any]:
    return {
        "qualified": verdict.qualified,
        "exit_code": verdict.exit_code,
        "headline": verdict.headline(),
        "counts": verdict.counts.as_dict(),
        "excused": verdict.excused,
        "infra_errors": verdict.infra_errors,
        "reasons": [
            {
                "reason": r.code,
                "gates": r.gates,
                "allowed_by": r.allowed_by or None,
                "count": r.size,
                "said": r.counted(),
                "checks": [
                    {"environment": c.env, "check": c.check, "base": c.base, "head": c.head}
                    for c in r.changes
                ],
                "named": list(r.named),
            }
            for r in verdict.reasons
        ],
    }


def qualify_json(
    report: Report,
    verdict: Verdict,
    why: Why | None,
    *,
    job: str,
    baseline: str,
    closable: list[str],
    readiness: dict[str, Any] | None,
    finished: str,
) -> str:
    """qualify.json: the qualification's record (``attest --qualify`` reads ``qualified``, the
    site lists it), rendered from the same verdict as every other sink."""
    gate = gate_json(verdict)
    doc = {
        "job": job,
        "baseline": baseline,
        "runs": list(report.head.runs),  # valorch attest --qualify
        **{k: gate[k] for k in ("qualified", "exit_code", "headline", "counts")},
        "closable_known_issues": closable,
        # the readiness gate's basis and cells, and the accepted regressions the VSA names
        **(readiness or {}),
        "reasons": list(verdict.lines()),
        "gate": gate,
        "triage": {
            f"{env} {check}": {"class": t.cls, "reason": t.reason}
            for (env, check), t in sorted((why or {}).items())
        },
        "finished": finished,
    }
    return json.dumps(doc, indent=1, ensure_ascii=False)


def diff_json(report: Report, verdict: Verdict | None = None, why: Why | None = None) -> str:
    def change(c: CellChange) -> dict[str, Any]:
        d: dict[str, Any] = {
            "environment": c.env,
            "check": c.check,
            "kind": c.kind,
            "mark": c.mark,
            "base": c.base,
            "head": c.head,
            "backend": c.backend,
            "note": c.note,
            "timing": asdict(c.timing) if c.timing else None,
            "issue": as_dict(c.issue) if c.issue else None,
        }
        if (t := _why(why, c)) is not None:  # why a red cell is red
            triage = asdict(t)
            d["triage"] = {"class": triage.pop("cls"), **triage}
        if d["timing"]:
            d["timing"] = {
                k: _finite(v) if isinstance(v, float) else v for k, v in d["timing"].items()
            }
        return d

    data = {
        **header(report),
        **({"gate": gate_json(verdict)} if verdict is not None else {}),
        "changes": [change(c) for c in report.changes if c.kind != SAME],
        "unchanged": sum(1 for c in report.changes if c.kind == SAME),
        "flips": [asdict(f) for f in report.flips],
        "geomean": [
            {"environment": e, "backend": b, "ratio": _finite(r), "checks": n}
            for e, b, r, n in report.geomean
        ],
        "noise": [
            {
                "environment": c.env,
                "check": c.check,
                "cv_base": _finite(c.timing.cv_base),
                "cv_head": _finite(c.timing.cv_head),
                "run_sigma": _finite(c.timing.run_sigma),
                "smallest_detectable": _finite(c.timing.detectable),
                "noisy_host": c.timing.noisy,
                "runs": [c.timing.runs_base, c.timing.runs_head],
            }
            for c in report.changes
            if c.timing is not None
        ],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def diff_junit(report: Report, verdict: Verdict | None = None, why: Why | None = None) -> str:
    """One testcase per compared check. With the gate's ``verdict``: every cell that fails the gate
    (unexcused failures, still failing, timing regressions, gated coverage loss) is a ``failure``;
    excused ones (known issues, allowed by a flag) and flaky/inconclusive are ``skipped`` with
    the reason; a ``partial`` check passes with its message in ``system-out``. Without one:
    counted regressions are the failures. ``why``: each red cell's triage, in its text."""
    root = ET.Element("testsuites", name=f"valorch diff {report.base.label} → {report.head.label}")
    failing = (
        verdict.failing_cells()
        if verdict is not None
        else frozenset((c.env, c.check) for c in report.changes if c.kind in COUNTED)
    )
    allowed = {
        (c.env, c.check): r.allowed_by
        for r in (verdict.reasons if verdict is not None else ())
        if not r.gates
        for c in r.changes
    }
    per_env: dict[str, list[CellChange]] = {}
    for c in report.changes:
        per_env.setdefault(c.env, []).append(c)
    for env, changes in per_env.items():
        suite = ET.SubElement(root, "testsuite", name=env)
        for c in changes:
            case = ET.SubElement(suite, "testcase", classname=class_part(env), name=c.check)
            text = detail(c, why)
            key = (c.env, c.check)
            change = f"{c.base or '—'} → {c.head or '—'}"
            if key in failing:
                still = c.kind != EXPECTED and c.base in FAILING and c.head in FAILING
                kind = "still_failing" if still else c.kind
                _mark(case, "failure", f"{change}: {text}", text, type=kind)
            elif c.kind == EXPECTED and c.issue is not None:
                _mark(case, "skipped", said(c.issue))
            # passes, and says what is missing (and what allowed the loss)
            elif c.head == "partial":
                extra = f" (coverage lost, not gated: {allowed[key]})" if key in allowed else ""
                ET.SubElement(case, "system-out").text = f"partial: {c.note}{extra}"
            elif c.head == "error" and c.kind != EXPECTED:  # the harness's, as in run --junit
                _mark(case, "error", f"{c.base or '—'} → error: {text}", text, type="error")
            elif key in allowed:
                note = f"{kind_word(c.kind)}: {change}, not gated: {allowed[key]} {text}"
                _mark(case, "skipped", note)
            elif c.kind in (FLAKY, INCONCLUSIVE, EXPECTED, NOT_COMPARABLE, COVERAGE_LOST):
                _mark(case, "skipped", f"{kind_word(c.kind)}: {change} {text}")
            elif c.head in (*NOT_EXERCISED, "xfail"):  # not a pass: says why (docs/statuses.md)
                _mark(case, "skipped", f"{c.head}: {c.note or text}")
        counted(suite)
    if verdict is not None:
        _gate_suite(root, verdict)
    for attr in ("tests", "failures", "errors", "skipped"):
        root.set(attr, str(sum(int(suite.get(attr, "0")) for suite in root)))
    return written(root)


def _gate_suite(root: ET.Element, verdict: Verdict) -> None:
    """The reasons no cell carries (nothing to judge, tampered output, readiness): one testcase
    each, a ``failure`` where it gates, so that the file fails the CI job exactly when the
    verdict does."""
    reasons = [r for r in verdict.reasons if not r.changes]
    if not reasons:
        return
    suite = ET.SubElement(root, "testsuite", name="valorch gate")
    for r in reasons:
        case = ET.SubElement(suite, "testcase", classname="gate", name=r.code)
        if r.gates:
            _mark(case, "failure", r.line(), r.line(), type=r.code)
        else:
            _mark(case, "skipped", f"not gated: {r.line()}")
    counted(suite)


def _mark(case: ET.Element, tag: str, message: str, text: str | None = None, **attrs: str) -> None:
    """A testcase's outcome element: its ``message`` cut to what a CI page shows, ``text`` whole."""
    ET.SubElement(case, tag, attrs, message=cut(message, 500)).text = text


@functools.cache
def _templates() -> Environment:
    """The report's template environment, built once per process (a property test renders
    thousands of reports)."""
    env = Environment(
        loader=FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["wbr"] = wbr
    env.filters["count"] = count
    return env


def diff_html(report: Report, verdict: Verdict | None = None, why: Why | None = None) -> str:
    """The HTML report: the verdict block, then everything else folded. ``why``: each red
    cell's triage, shown in its row (class and reason) as in the Markdown report."""
    env = _templates()
    shown = {id(c) for r in (verdict.reasons if verdict is not None else ()) for c in r.changes}
    sections = [
        (title, [c for c in _sorted(report, kinds) if id(c) not in shown])
        for title, kinds in SECTIONS
    ]
    return env.get_template("diff.html.j2").render(
        verdict=verdict,
        gate_sections=verdict_rows(verdict) if verdict is not None else [],
        gate_mark=gate_mark,
        count_words=count_words(report, verdict),
        report=report,
        head=header(report),
        sections=[(t, rows) for t, rows in sections if rows],
        timing_text=_timing_text,
        href=encode.href,
        why_of=lambda c: _why(why, c),
        pct=pct,
        counted=COUNTED,
        badge=badge,
        page_css=PAGE_CSS,
        noise=noise_rows(report),
    )


RED = ("fail", "crash", "timeout", "error", "flaky")
RENDERERS: dict[str, Callable[..., str]] = {
    "md": diff_md,
    "html": diff_html,
    "json": diff_json,
    "junit": diff_junit,
}
