"""The triage classifier (pure): each class from the evidence that shows it, and undetermined
where the evidence does not decide."""

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
    t = classify(case(history=[seen("r-rep", B, "pass", day=9), seen("r-rep2", B, "fail", day=8)]))
    assert t.cls == "flaky" and "1 of 2" in t.reason


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
