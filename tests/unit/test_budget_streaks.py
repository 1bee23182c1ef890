"""budgets.streaks: a suite is flagged exactly when its newest K or more stored runs, by
start time, each took longer than its budget, whatever order the tasks come in."""

from __future__ import annotations

from datetime import datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from orchestrator.services.budgets import streaks, used

T0 = datetime(2026, 1, 1)


@given(
    st.lists(st.floats(min_value=0.1, max_value=20), min_size=1, max_size=12),
    st.integers(min_value=1, max_value=6),
    st.randoms(use_true_random=False),
)
def test_flagged_iff_the_newest_k_runs_are_all_over(tooks, k, rnd):
    runs = [
        {"id": f"r{i:02d}", "job": "j", "alias": "host", "started": T0 + timedelta(hours=i)}
        for i in range(len(tooks))
    ]
    tasks = [
        (f"r{i:02d}", "command", {"tier": "smoke", "budget": 5.0}, {"total_s": t})
        for i, t in enumerate(tooks)
    ]
    rnd.shuffle(tasks)
    expect = len(tooks) >= k and all(t > 5.0 for t in tooks[-k:])
    assert bool(streaks(runs, tasks, k)) == expect


def test_used_sums_per_tier_and_skips_suites_without_a_budget():
    class Task:
        def __init__(self, suite, spec, took):
            self.suite, self.suite_spec, self.timings = suite, spec, {"total_s": took}

    lines = used(
        [
            Task("a", {"tier": "nightly"}, 10.0),
            Task("b", {"tier": "smoke", "budget": 2}, 3.0),
            Task("c", {"tier": "nightly", "budget": 60}, 5.0),
            Task("d", {}, 99.0),
        ]
    )
    assert [x["tier"] for x in lines] == ["smoke", "nightly"]
    assert lines[0] == {
        "tier": "smoke",
        "used_s": 3.0,
        "budget_s": 2.0,
        "suites": ["b"],
        "over": True,
    }
    assert lines[1]["used_s"] == 15.0 and lines[1]["budget_s"] == 1860.0 and not lines[1]["over"]
