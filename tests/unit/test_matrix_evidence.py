"""matrix/evidence.py: which stored attempt speaks for a cell (pure, no store)."""

from datetime import datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.matrix.evidence import (
    LOOKBACK,
    Attempt,
    EnvWalk,
    RunFacts,
    SuitePlan,
    column_labels,
    feeds,
    host_class,
)


def walk_all(runs, plans, attempts, states=None):
    """Every environment walked over runs held in memory, newest first, stopping at each
    environment's settled point (the walk the store does over the database)."""
    by_env = {}
    for r in sorted(runs, key=lambda r: (r.started, r.run_id), reverse=True):
        by_env.setdefault(r.env, []).append(r)
    walks = {}
    for env, env_runs in by_env.items():
        w = EnvWalk(env, {p.suite for r in env_runs for p in plans.get(r.run_id, ())})
        for r in env_runs:
            if w.done:
                break
            w.feed(
                r,
                plans.get(r.run_id, ()),
                attempts.get(r.run_id, ()),
                (states or {}).get(r.run_id, "done"),
            )
        walks[env] = w
    return walks


T0 = datetime(2026, 11, 1, 2, 0)


def run(n, *, digest="sha256:a", backend="cpu", cls="cpu", job="nightly", alias="img"):
    return RunFacts(
        f"run-{n}",
        alias,
        digest,
        backend,
        "h1",
        cls,
        job,
        T0 + timedelta(days=n),
        T0 + timedelta(days=n, minutes=5),
    )


def att(r, check, status, *, suite="smoke", attempt=1, version=1, device="cpu", message=""):
    return Attempt(
        r.run_id, suite, check, version, check, "kernel", attempt, status, message, device, None
    )


def full(suite="smoke", state="done"):
    return [SuitePlan(suite, False, state)]


def narrow(suite="smoke"):
    return [SuitePlan(suite, True, "done")]


def cells(walk, column="img"):
    out = {}
    for o in walk.observations(column):
        out.setdefault(o.check, []).append(o)
    return {c: (os[-1].run_id, tuple(o.status for o in os), os[-1].flags) for c, os in out.items()}


def test_a_narrow_newer_run_keeps_every_older_verdict():
    old, new = run(1), run(2)
    w = EnvWalk(("img", "cpu"), {"smoke"})
    w.feed(new, narrow(), [att(new, "a", "fail")])
    assert not w.done  # a filtered suite settles nothing
    w.feed(
        old, full(), [att(old, "a", "pass"), att(old, "b", "pass"), att(old, "c", "unsupported")]
    )
    assert w.done
    assert cells(w) == {
        "a": ("run-2", ("fail",), ()),
        "b": ("run-1", ("pass",), ()),
        "c": ("run-1", ("unsupported",), ()),
    }


def test_an_inconclusive_newer_attempt_never_erases_a_final_verdict():
    old, new = run(1), run(2)
    w = EnvWalk(("img", "cpu"), {"smoke"})
    w.feed(new, full(), [att(new, "a", "error", message="engine went away"), att(new, "b", "pass")])
    assert not w.done and w.pending == {"a"}  # a harness error: look further back for that check
    w.feed(old, full(), [att(old, "a", "pass"), att(old, "b", "fail")])
    got = cells(w)
    assert got["a"][0:2] == ("run-1", ("pass",)) and "newer-inconclusive" in got["a"][2]
    assert got["b"][0:2] == ("run-2", ("pass",))
    message = next(o for o in w.observations("img") if o.check == "a").message
    assert "engine went away" in message and "run-2"[:8] in message


def test_only_error_evidence_still_shows():
    only = run(1)
    w = EnvWalk(("img", "cpu"), {"smoke"})
    w.feed(only, full(state="error"), [att(only, "a", "error")])
    assert cells(w) == {"a": ("run-1", ("error",), ())}


def test_the_lookback_for_a_check_without_a_final_verdict_is_bounded():
    runs = [run(i) for i in range(40)]
    plans = {r.run_id: full() for r in runs}
    attempts = {r.run_id: [att(r, "a", "error"), att(r, "b", "pass")] for r in runs}
    walk = walk_all(runs, plans, attempts)[("img", "cpu")]
    assert walk.runs_read == 1 + LOOKBACK
    assert cells(walk)["a"][0:2] == ("run-39", ("error",))


def test_a_retired_check_stays_out():
    old, new = run(1), run(2)
    w = EnvWalk(("img", "cpu"), {"smoke"})
    w.feed(new, full(), [att(new, "a", "error"), att(new, "b", "pass")])
    w.feed(old, full(), [att(old, "a", "pass"), att(old, "gone", "pass")])
    assert set(cells(w)) == {"a", "b"} and cells(w)["a"][0] == "run-1"


def test_every_attempt_of_the_chosen_run_makes_the_cell():
    r = run(1)
    w = EnvWalk(("img", "cpu"), {"smoke"})
    w.feed(r, full(), [att(r, "a", "fail", attempt=1), att(r, "a", "pass", attempt=2)])
    assert cells(w)["a"][1] == ("fail", "pass")  # flaky, from one run: never mixed across runs


def test_a_changed_check_version_is_another_check():
    old, new = run(1), run(2)
    w = EnvWalk(("img", "cpu"), {"smoke"})
    w.feed(new, narrow(), [att(new, "a", "pass", version=2)])
    w.feed(old, full(), [att(old, "a", "fail", version=1), att(old, "b", "pass")])
    assert cells(w)["a"][0:2] == ("run-2", ("pass",))
    assert [o.version for o in w.observations("img") if o.check == "a"] == [2]


def test_an_older_digest_says_so():
    old, new = run(1, digest="sha256:old"), run(2, digest="sha256:new")
    w = EnvWalk(("img", "cpu"), {"smoke"})
    w.feed(new, narrow(), [att(new, "a", "pass")])
    w.feed(old, full(), [att(old, "a", "pass"), att(old, "b", "pass")])
    got = cells(w)
    assert "previous-digest" in got["b"][2] and "previous-digest" not in got["a"][2]


def test_a_gpu_image_result_on_the_cpu_is_flagged():
    r = run(1, backend="rocm", cls="amd gfx942")
    w = EnvWalk(("img", "amd gfx942"), {"smoke"})
    w.feed(
        r,
        full(),
        [
            att(r, "a", "pass", device="cpu"),
            att(r, "b", "pass", device="cuda:0 AMD Instinct MI300X"),
        ],
    )
    from orchestrator.matrix.model import cell

    seen = {}
    for o in w.observations("img"):
        seen.setdefault(o.check, []).append(o)
    a, b = cell(seen["a"]), cell(seen["b"])  # the one cell rule decides cpu-only
    assert (a.verdict, b.verdict) == ("cpu-only", "pass")
    assert "cpu-only" in a.flags and "cpu-only" not in b.flags


def test_suites_settle_one_by_one():
    a, b, c = run(1), run(2), run(3)
    w = EnvWalk(("img", "cpu"), {"smoke", "features"})
    w.feed(c, full("smoke"), [att(c, "s1", "pass", suite="smoke")])
    assert not w.done
    w.feed(b, full("smoke"), [att(b, "s1", "fail", suite="smoke")])
    assert not w.done
    w.feed(a, full("features"), [att(a, "f1", "pass", suite="features")])
    assert w.done
    assert cells(w) == {"s1": ("run-3", ("pass",), ()), "f1": ("run-1", ("pass",), ())}


def test_host_class_and_column_labels():
    assert (
        host_class({"gpus": [{"vendor": "amd", "arch": "gfx942"}] * 2}, "rocm", False)
        == "amd gfx942"
    )
    assert host_class({"gpus": [{"vendor": "amd", "arch": "gfx942"}]}, "rocm", True) == "cpu only"
    assert host_class({"gpus": [{"vendor": "nvidia", "arch": "sm_90"}]}, "cpu", False) == "cpu"
    assert host_class({}, "cuda", False) == "cpu only"
    labels = column_labels(
        [("a", "cpu"), ("b", "amd gfx942"), ("b", "cpu only"), ("c", "cpu only")]
    )
    assert labels == {
        ("a", "cpu"): "a",
        ("b", "amd gfx942"): "b · amd gfx942",
        ("b", "cpu only"): "b · cpu only",
        ("c", "cpu only"): "c · cpu only",
    }


def test_which_runs_feed_a_matrix():
    named = {"job": None, "include_special": False}
    assert feeds("nightly", "rocm", False, **named)
    assert not feeds("adhoc", "cpu", False, **named)
    assert not feeds("bisect", "cpu", False, **named)
    assert not feeds("nightly", "rocm", True, **named)  # --cpu-only of a GPU image
    assert feeds("nightly", "cpu", True, **named)  # --cpu-only changes nothing for a CPU image
    assert feeds("adhoc", "rocm", True, job=None, include_special=True)
    assert feeds("adhoc", "cpu", False, job="adhoc", include_special=False)
    assert not feeds("nightly", "cpu", False, job="adhoc", include_special=True)
    assert not feeds(
        "inventory", "cpu", False, job=None, include_special=True
    )  # an audit holds no verdicts


def test_a_run_with_nothing_in_it_settles_nothing():
    empty, old = run(2), run(1)
    w = EnvWalk(("img", "cpu"), set())
    w.feed(empty, (), ())
    assert not w.done
    w.feed(old, (), [att(old, "a", "pass", suite=None)])
    assert w.done and cells(w) == {"a": ("run-1", ("pass",), ())}


STATUSES = ("pass", "fail", "crash", "timeout", "unsupported", "partial", "error", "skip", "xfail")
CHECKS = "abcde"


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.lists(
        st.one_of(
            st.tuples(
                st.just(False),
                st.fixed_dictionaries({c: st.sampled_from(STATUSES) for c in CHECKS}),
            ),  # whole
            st.tuples(
                st.just(True),
                st.dictionaries(st.sampled_from(CHECKS), st.sampled_from(STATUSES), min_size=1),
            ),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_property_no_later_run_erases_an_earlier_final_verdict(history):
    """Whatever runs come later (narrowed by a filter or whole, failing or inconclusive), a
    check's cell is its newest final verdict: a narrowed run's skip and any run's harness
    error never replace one, and a check measured once never disappears. The walk settles at
    the newest whole run (it holds every check); a check still without a final verdict there
    looks further back."""
    runs = [run(i) for i in range(len(history))]
    plans = {
        r.run_id: (narrow() if filtered else full())
        for r, (filtered, _) in zip(runs, history, strict=True)
    }
    attempts = {
        r.run_id: [att(r, c, s) for c, s in statuses.items()]
        for r, (_, statuses) in zip(runs, history, strict=True)
    }
    got = cells(walk_all(runs, plans, attempts)[("img", "cpu")])
    assert set(got) == {c for _, statuses in history for c in statuses}
    whole = [i for i, (filtered, _) in enumerate(history) if not filtered]
    settled = max(whole) if whole else 0
    for check in got:
        said = [
            (runs[i].run_id, statuses[check], filtered, i)
            for i, (filtered, statuses) in enumerate(history)
            if check in statuses
        ]
        final = [
            (r, s, i)
            for r, s, filtered, i in said
            if s != "error" and not (s == "skip" and filtered)
        ]
        recent = [f for f in final if f[2] >= settled]
        # a final verdict at or after the settled run wins; only a check with none looks further back
        pick = recent[-1] if recent else (final[-1] if final else None)
        newest_any = [x for x in said if x[3] >= settled] or said
        expect = pick[:2] if pick else newest_any[-1][:2]
        run_id, statuses, flags = got[check]
        assert (run_id, statuses[-1]) == expect
        assert ("newer-inconclusive" in flags) == (pick is not None and said[-1][:2] != pick[:2])


@pytest.mark.parametrize("first", [0, 3])
def test_walk_all_reads_only_to_the_settled_run(first):
    runs = [run(i) for i in range(6)]
    plans = {r.run_id: (full() if i == first else narrow()) for i, r in enumerate(runs)}
    attempts = {r.run_id: [att(r, "a", "pass")] for r in runs}
    walk = walk_all(runs, plans, attempts)[("img", "cpu")]
    assert walk.runs_read == 6 - first
