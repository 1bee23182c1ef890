"""The triage classifier (pure): each class from the evidence that shows it, and undetermined
where the evidence does not decide."""

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.regression.triage import Case, Seen, classify

A, B = "sha256:" + "a" * 64, "sha256:" + "b" * 64


def case(attempts=("fail",), history=(), **kw):
    base = {
        "check": "k.conv",
        "run": "r-now",
        "digest": B,
        "host": "h1",
        "host_class": "amd:gfx942",
        "started": "2026-01-10T00:00:00",
        "attempts": tuple(attempts),
        "history": tuple(history),
    }
    base.update(kw)
    return Case(**base)


def seen(run, digest, verdict, host="h1", cls="amd:gfx942", day=1):
    return Seen(run, digest, host, cls, verdict, f"2026-01-0{day}T00:00:00")


def test_a_pass_is_not_triaged():
    assert classify(case(("pass",))) is None and classify(case(("skip",))) is None


def test_infrastructure():
    t = classify(case(("error",)))
    assert t.cls == "infrastructure" and t.runs == ("r-now",)


def test_host_fault_from_preflight_and_from_another_host():
    assert (
        classify(case(host_problems=("L0 preflight failed: /dev/kfd missing",))).cls == "host fault"
    )
    t = classify(case(history=[seen("r-other", B, "pass", host="h2", day=9)]))
    assert t.cls == "host fault" and t.hosts == ("h1", "h2") and "h2" in t.reason


def test_flaky_from_attempts_and_from_repeats():
    assert classify(case(("fail", "pass"))).cls == "flaky"
    # fail, pass, fail (this run) on the same digest and host: interleaved, flaky
    t = classify(case(history=[seen("r-rep", B, "pass", day=9), seen("r-rep2", B, "fail", day=8)]))
    assert t.cls == "flaky" and "(FPF," in t.reason
    # an earlier run with mixed attempts: flaky too
    assert classify(case(history=[seen("r-mix", B, "flaky", day=9)])).cls == "flaky"


def test_a_streak_of_failures_after_passes_on_one_digest_is_a_regression_never_flaky():
    """4 passes, then 6 failures on the same digest and host: each failure of the streak is a
    regression (what changed is around the image), the first one included."""
    passes = [seen(f"r-p{d}", B, "pass", day=d) for d in range(1, 5)]
    fails = [seen(f"r-f{d}", B, "fail", day=d) for d in range(5, 10)]
    t = classify(case(history=[*passes, *fails]))
    assert t.cls == "regression" and "in 4 runs" in t.reason and "all 6 runs since" in t.reason
    first = classify(case(history=passes[:1], started="2026-01-02T00:00:00"))
    assert first.cls == "regression" and "in 1 run " in first.reason
    assert "the 1 run since" in first.reason


def test_image_drift():
    t = classify(case(expected_digest=A, expected_from="the catalog"))
    assert t.cls == "image drift" and t.digests == (A, B) and "the tag moved" in t.reason
    # the check failed on the expected digest too: the drift explains nothing
    t = classify(
        case(
            expected_digest=A,
            expected_from="the catalog",
            history=[seen("r-old", A, "fail", day=5)],
        )
    )
    assert t.cls == "never passed"


def test_regression_needs_a_pass_on_the_previous_digest_and_a_fail_everywhere_now():
    history = [seen("r-old", A, "pass", day=5), seen("r-h2", B, "fail", host="h2", day=9)]
    t = classify(case(history=history))
    assert t.cls == "regression" and t.digests == (A, B) and set(t.hosts) == {"h1", "h2"}
    assert "r-old"[:8] in t.reason
    # the previous digest ran on another host class only: nothing to compare with
    t = classify(case(history=[seen("r-old", A, "pass", cls="nvidia:sm_90", day=5)]))
    assert t.cls == "undetermined"
    # the previous digest failed too: the break is older
    t = classify(case(history=[seen("r-older", A, "pass", day=2), seen("r-old", A, "fail", day=5)]))
    assert t.cls == "undetermined" and "older" in t.reason


def test_new_check_and_never_passed():
    assert classify(case()).cls == "new check"
    t = classify(case(history=[seen("r-old", A, "fail", day=5)]))
    assert t.cls == "never passed"


def test_a_changed_definition_is_not_flaky():
    old = [
        Seen("r-1", B, "h1", "amd:gfx942", "pass", "2026-01-01T00:00:00", "0" * 16),
        Seen("r-2", B, "h1", "amd:gfx942", "pass", "2026-01-02T00:00:00", "0" * 16),
    ]
    t = classify(case(history=old, definition="1" * 16))
    assert t.cls == "definition changed" and t.runs == ("r-now", "r-2")
    assert "00000000" in t.reason and "11111111" in t.reason
    # it passed under the new definition too: the definition explains nothing; passes, then
    # this failure, on one digest and host: a streak, a regression (never flaky)
    again = [*old, Seen("r-3", B, "h1", "amd:gfx942", "pass", "2026-01-03T00:00:00", "1" * 16)]
    assert classify(case(history=again, definition="1" * 16)).cls == "regression"


VERDICTS = st.sampled_from(["pass", "fail", "crash", "flaky", "error"])


@settings(max_examples=200, deadline=None)
@given(
    attempts=st.lists(
        st.sampled_from(["pass", "fail", "timeout", "error"]), min_size=1, max_size=3
    ),
    history=st.lists(
        st.tuples(
            st.sampled_from([A, B]), st.sampled_from(["h1", "h2"]), VERDICTS, st.integers(1, 9)
        ),
        max_size=5,
    ),
    changed=st.booleans(),
)
def test_the_definition_rule_speaks_only_when_the_definition_changed(attempts, history, changed):
    """With one definition everywhere, triage decides as if none were stored; with another
    one in every earlier run, a failure that passed under the old one is "definition changed"
    unless this run alone explains it."""
    seen_ = [
        Seen(f"r{i}", d, h, "amd:gfx942", v, f"2026-01-0{day}T00:00:00", "0" * 16)
        for i, (d, h, v, day) in enumerate(history)
    ]
    unknown = [Seen(s.run, s.digest, s.host, s.host_class, s.verdict, s.started) for s in seen_]
    blind = classify(case(attempts, unknown))
    got = classify(case(attempts, seen_, definition=("1" if changed else "0") * 16))
    if not changed:
        assert got == blind
    elif got is not None and got.cls == "definition changed":
        assert any(s.verdict == "pass" for s in seen_)
    elif got is not None and any(s.verdict == "pass" for s in seen_):
        assert got.cls in ("infrastructure", "host fault", "flaky")
        assert got.cls != "flaky" or "this run's attempts" in got.reason
