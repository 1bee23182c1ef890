"""The readiness gate against an independent oracle of docs/readiness.md (Sippy's rules),
written here without the production decision code: Hypothesis histories (runs with retried
attempts, renamed command checks, acceptances, unequal sides, empty sides) go through the
production path from per-run records to the decision (services/readiness.seen_of, cells_of;
regression/readiness.decide), and the decision, its exit code and every sink parsed back
(JSON loaded, Markdown and terminal searched) must equal the oracle's."""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.regression.readiness import Env, Options  # plain data types
from orchestrator.render.readiness import render_json, render_md, render_text
from orchestrator.services import readiness as service

T0 = datetime(2026, 1, 1)
ENVS = (Env("host", "cpu", "cpu"), Env("rocm", "rocm", "amd:gfx942"))
CHECKS = ("smoke.a", "smoke.b", "command.old", "command.new")


# ---- the oracle: docs/readiness.md, written again ---------------------------------------
def o_final(attempts):
    """A run's final verdict: passed on any attempt after a failure -> flaky (a pass)."""
    if "pass" in attempts and any(a in ("fail", "crash", "timeout") for a in attempts):
        return "pass"
    return attempts[-1]


def o_count(runs):
    passed = sum(1 for v in runs if v == "pass")
    failed = sum(1 for v in runs if v in ("fail", "crash", "timeout"))
    return passed, passed + failed


def o_tail(kp, n, bp, m):
    """P(candidate passes <= kp) under the hypergeometric law, from factorials."""
    total, passes = n + m, kp + bp
    return min(
        1.0,
        sum(
            math.comb(passes, x) * math.comb(total - passes, n - x)
            for x in range(kp + 1)
            if n - x <= total - passes
        )
        / math.comb(total, n),
    )


def o_status(c, b, opts):
    (cp, cn), (bp, bn) = c, b
    if cn == 0:
        return "missing basis and sample" if bn == 0 else "missing sample"
    if bn == 0:
        return "missing basis"
    if opts.min_fail and cn - cp < opts.min_fail:
        return "not significant"
    alpha = 1 - opts.confidence / 100
    if cp / cn >= bp / bn:
        return "significant improvement" if o_tail(bp, bn, cp, cn) < alpha else "not significant"
    drop = bp / bn - cp / cn
    if drop > opts.pity / 100 and o_tail(cp, cn, bp, bn) < alpha:
        return "extreme regression" if drop > opts.extreme / 100 else "significant regression"
    return "not significant"


# ---- histories ----------------------------------------------------------------------
# a run's attempts of one check: mostly passing, mixed, or mostly failing sides
PASSING_RUN = (("pass",),) * 6 + (("fail", "pass"), ("skip",), ("fail",))
MIXED_RUN = (("pass",), ("fail",), ("fail", "pass"), ("crash",), ("skip",), ("error",))
FAILING_RUN = (("fail",),) * 4 + (("timeout",), ("crash",), ("pass",), ("fail", "fail"))
POOLS = (PASSING_RUN, MIXED_RUN, FAILING_RUN)


def side(n_max: int):
    """Runs of one side: (env index, attempts of the three checks), from one pool."""
    return st.sampled_from(POOLS).flatmap(
        lambda pool: st.lists(
            st.tuples(
                st.integers(0, len(ENVS) - 1),
                st.tuples(*[st.sampled_from(pool)] * 3),
            ),
            max_size=n_max,
        )
    )


@st.composite
def histories(draw):
    rename = draw(st.booleans())
    base_checks = ("smoke.a", "smoke.b", "command.old")
    cand_checks = ("smoke.a", "smoke.b", "command.new" if rename else "command.old")

    def named(runs, checks, prefix):
        return [
            (f"{prefix}{i}", env, dict(zip(checks, map(list, per), strict=True)))
            for i, (env, per) in enumerate(runs)
        ]

    cand = named(draw(side(10)), cand_checks, "c")
    base = named(draw(side(24)), base_checks, "b")  # unequal sides
    accepted = frozenset(draw(st.sets(st.sampled_from(CHECKS), max_size=2)))
    opts = Options(
        confidence=draw(st.sampled_from([95.0, 99.0, 90.0])),
        pity=draw(st.sampled_from([5.0, 0.0, 10.0])),
        min_fail=draw(st.sampled_from([3, 0, 1])),
        extreme=draw(st.sampled_from([15.0, 40.0])),
        allow_empty=draw(st.booleans()),
    )
    return cand, base, accepted, opts


def records(runs, same_decl):
    out = []
    for i, (run, env, per) in enumerate(runs):
        for check, statuses in per.items():
            decl = "d-false-x" if check.startswith("command.") and same_decl else None
            out.append(
                service.Record(
                    run, check, ENVS[env], T0 + timedelta(hours=i), tuple(statuses), decl
                )
            )
    return out


def production(cand, base, accepted, opts):
    from orchestrator.regression import readiness as rd  # the rule under test

    cells, _basis = service.cells_of(
        service.seen_of(records(cand, True)), service.seen_of(records(base, True))
    )
    live = frozenset(
        (c.check, c.env.label)
        for c in rd.judge(cells, opts)
        if c.check in accepted and c.status in rd.FAILING_STATUSES
    )
    return rd.decide(cells, len(cand), len(base), opts, live)


def as_sides(runs):
    side: dict = {}
    for _run, env, per in runs:
        for check, statuses in per.items():
            side.setdefault((check, env), []).append(list(statuses))
    return side


class _Report:
    """What the renderers read: the decision and its context."""

    def __init__(self, decision, opts, n_cand, n_base):
        self.job, self.basis = "j", "window:7d"
        self.start, self.end = T0, T0 + timedelta(days=7)
        self.options, self.decision = opts, decision
        self.candidate_runs, self.basis_runs = ("r",) * n_cand, ("r",) * n_base
        self.triage, self.accepted = {}, {}


@given(histories())
@settings(max_examples=2600, deadline=None)
def test_production_decision_equals_the_oracle_in_every_sink(h):
    cand, base, accepted, opts = h
    decision = production(cand, base, accepted, opts)
    c_side, b_side = as_sides(cand), as_sides(base)
    want_verdict, want_code, want_status = _oracle(
        c_side, b_side, len(cand), len(base), accepted, opts
    )
    got_status = {
        (c.check, next(i for i, e in enumerate(ENVS) if e == c.env)): c.status
        for c in decision.cells
    }
    assert got_status == {k: s for k, s in want_status.items() if s != "missing basis and sample"}
    assert (decision.verdict, decision.exit_code) == (want_verdict, want_code)
    report = _Report(decision, opts, len(cand), len(base))
    doc = json.loads(render_json(report))
    assert (doc["verdict"], doc["exit_code"]) == (want_verdict, want_code)
    assert {(c["check"], c["env"]["label"]): c["status"] for c in doc["cells"]} == {
        (c.check, c.env.label): c.status for c in decision.cells
    }
    assert f"**{want_verdict.upper()} (exit {want_code})**" in render_md(report)
    assert f"\n{want_verdict.upper()} (exit {want_code}): " in render_text(report)


def _oracle(c_side, b_side, n_cand, n_base, accepted, opts):
    c_cells = {k: o_count([o_final(r) for r in v]) for k, v in c_side.items()}
    b_cells = {k: o_count([o_final(r) for r in v]) for k, v in b_side.items()}
    for e in range(len(ENVS)):  # a rename is followed: one declaration, each id on one side
        new, old = ("command.new", e), ("command.old", e)
        if new in c_side and old in b_side and new not in b_side and old not in c_side:
            b_cells[new] = b_cells.pop(old)
    keys = set(c_cells) | set(b_cells)
    statuses = {k: o_status(c_cells.get(k, (0, 0)), b_cells.get(k, (0, 0)), opts) for k in keys}
    failing = ("extreme regression", "significant regression", "missing sample")
    both = sum(1 for k in keys if c_cells.get(k, (0, 0))[1] and b_cells.get(k, (0, 0))[1])
    empty = n_cand == 0 or n_base == 0 or both == 0
    gating = [k for k in keys if statuses[k] in failing and k[0] not in accepted and n_cand]
    no = bool(gating) or (empty and not opts.allow_empty)
    return ("not ready" if no else "ready"), (1 if no else 0), statuses
