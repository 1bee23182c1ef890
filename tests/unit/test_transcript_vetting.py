"""A result comes only from the check that earned it: the
transcript's records are vetted against the task's checks, their order and the
suite's attempts. Replays recorded real probe output (tests/fixtures/forgery)
and real probe runs; forged lines never become verdicts, genuine runs never
look tampered."""

import json
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.catalog.core import HOST_IMAGE, load_job
from orchestrator.executors.transcript import FLOODED, MAX_TOTAL, TAMPERED, Transcript, conclude
from orchestrator.scheduling.plan import suite_checks
from orchestrator.spec import HostSpec, SuiteRef, Task
from valorch_probe import MARKER

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "forgery"


def task_for(suite: SuiteRef) -> Task:
    return Task(image=HOST_IMAGE, suite=suite, host=HostSpec(name="h"), checks=suite_checks(suite))


def fixture_task(name: str) -> Task:
    return task_for(load_job(FIXTURES / f"{name}.job.yaml").suites[0])


def line(obj) -> bytes:
    return (MARKER + json.dumps(obj) + "\n").encode()


def conclude_bytes(task: Task, data: bytes, exit_code: int = 0, chunk: int = 4096):
    t = Transcript()
    for i in range(0, len(data), chunk):
        t.feed(data[i : i + chunk])
    return conclude(t, task, exit_code=exit_code)


def by_check(execution):
    out = {}
    for r in execution.results:
        out.setdefault(r.check, []).append(r)
    return out


def statuses(execution):
    return {c: [(r.attempt, r.status) for r in rs] for c, rs in by_check(execution).items()}


def tampered(execution):
    return sorted(r.check for r in execution.results if r.metrics.get("tampered"))


# -- a stream the probe could write (synthetic, the real format) ------------------


def genuine(checks, results, workers=1):
    out = line({"type": "meta", "checks": checks, "suite": "command"})
    for n in range(1, workers + 1):
        out += line({"type": "worker", "n": n})
    for cid, attempt, status in results:
        out += line(
            {
                "type": "result",
                "check": cid,
                "attempt": attempt,
                "status": status,
                "kind": "command",
            }
        )
    return out + line({"type": "end", "workers": workers})


def command_task(*ids, attempts=1):
    return task_for(
        SuiteRef(
            name="command", attempts=attempts, commands=[{"id": i, "argv": ["true"]} for i in ids]
        )
    )


# -- recorded attacks -------------------------------------------------------------


def test_recorded_attack_through_proc1_and_the_worker_pipe_changes_no_verdict():
    """command.a forged command.d, kernels.matmul.fp16 and env.facts on /proc/1/fd/1;
    command.b forged command.c in the worker's pipe. Stored before the fix: all pass."""
    task = fixture_task("proc1_and_worker_pipe")
    ex = conclude_bytes(task, (FIXTURES / "proc1_and_worker_pipe.stdout").read_bytes())
    # results for checks the task does not have cannot be pinned: the whole task is tampered
    assert set(by_check(ex)) == {"command.a", "command.b", "command.c", "command.d"}
    assert all(r.status == "error" and r.message.startswith(TAMPERED) for r in ex.results)
    assert "'kernels.matmul.fp16', which is not a check of this task" in ex.results[0].message
    assert ex.meta["protocol"]["violations"]


def test_recorded_forgery_of_a_task_check_taints_only_that_check():
    """The same recording without the lines for checks outside the task: the forged
    command.d pass arrived while command.a ran, the forged command.c (from the
    worker pipe, forwarded by the old parent) while command.b ran."""
    task = fixture_task("proc1_and_worker_pipe")
    data = b"".join(
        ln
        for ln in (FIXTURES / "proc1_and_worker_pipe.stdout").read_bytes().splitlines(True)
        if b'"check":"kernels.matmul.fp16"' not in ln and b'"check":"env.facts"' not in ln
    )
    ex = conclude_bytes(task, data)
    st = statuses(ex)
    assert st["command.a"] == [
        (1, "pass")
    ]  # its own verdict: the forging command exited 0 back then
    assert st["command.b"] == [(1, "pass")]
    assert tampered(ex) == ["command.c", "command.d"]
    msgs = {r.check: r.message for r in ex.results}
    assert "before command.b had finished" in msgs["command.c"]
    assert "before command.a had finished" in msgs["command.d"]  # forged while command.a ran
    assert not any(r.status == "pass" for r in ex.results if r.check in ("command.c", "command.d"))


def test_recorded_forged_end_meta_worker_records_taint_the_task():
    task = fixture_task("forged_records")
    ex = conclude_bytes(task, (FIXTURES / "forged_records.stdout").read_bytes())
    assert tampered(ex) == ["command.a", "command.b"]
    assert "after the probe's end record" in ex.results[0].message


# -- variants ---------------------------------------------------------------------


def test_a_genuine_stream_is_accepted_as_is():
    task = command_task("a", "b", "c", attempts=2)
    data = genuine(
        ["command.a", "command.b", "command.c"],
        [
            ("command.a", 1, "pass"),
            ("command.b", 1, "fail"),
            ("command.b", 2, "pass"),
            ("command.c", 1, "crash"),
            ("command.c", 2, "timeout"),
        ],
        workers=3,
    )
    ex = conclude_bytes(task, data, chunk=7)
    assert statuses(ex) == {
        "command.a": [(1, "pass")],
        "command.b": [(1, "fail"), (2, "pass")],
        "command.c": [(1, "crash"), (2, "timeout")],
    }
    assert tampered(ex) == [] and ex.meta["protocol"]["violations"] == []


def test_sequence_violations_are_pinned_to_the_check_they_name():
    task = command_task("a", "b", "c", attempts=2)
    cases = {
        # a forged pass for the check in flight, then its genuine fail: neither wins
        "duplicate": [
            ("command.a", 1, "pass"),
            ("command.a", 1, "fail"),
            ("command.b", 1, "pass"),
            ("command.c", 1, "pass"),
        ],
        # a retry after a pass, claimed for a check that already finished
        "attempt after pass": [
            ("command.a", 1, "pass"),
            ("command.a", 2, "fail"),
            ("command.b", 1, "pass"),
            ("command.c", 1, "pass"),
        ],
        # an attempt number out of turn
        "skipped attempt": [
            ("command.a", 3, "pass"),
            ("command.b", 1, "pass"),
            ("command.c", 1, "pass"),
        ],
        # a result for a later check before the current one finished
        "ahead of turn": [
            ("command.c", 1, "pass"),
            ("command.a", 1, "pass"),
            ("command.b", 1, "pass"),
            ("command.c", 1, "fail"),
        ],
    }
    expect = {
        "duplicate": "command.a",
        "attempt after pass": "command.a",
        "skipped attempt": "command.a",
        "ahead of turn": "command.c",
    }
    for name, results in cases.items():
        ex = conclude_bytes(task, genuine([], results))
        assert tampered(ex) == [expect[name]], name
        assert all(r.status != "pass" for r in ex.results if r.check == expect[name]), name
        others = [r for r in ex.results if r.check != expect[name]]
        assert all(r.status == "pass" and not r.metrics for r in others), (name, others)


def test_attempts_beyond_the_suite_are_tampering():
    task = command_task("a", attempts=1)
    ex = conclude_bytes(task, genuine([], [("command.a", 1, "fail"), ("command.a", 2, "pass")]))
    assert (
        tampered(ex) == ["command.a"]
        and "attempt 2 after the check had finished" in ex.results[0].message
    )


def test_records_that_cannot_be_pinned_taint_the_whole_task():
    task = command_task("a", "b")
    ok = [("command.a", 1, "pass"), ("command.b", 1, "fail")]
    base = genuine([], ok)
    variants = {
        "unknown check": base.replace(line({"type": "end", "workers": 1}), b"")
        + line({"type": "result", "check": "env.facts", "status": "pass"})
        + line({"type": "end", "workers": 1}),
        "second meta": base + line({"type": "meta", "suite": "command"}),
        "unknown check after a tainted one": genuine([], [("command.a", 1, "pass")] * 3).replace(
            b'{"type": "end"',
            b'{"type": "result", "check": "env.facts", "status": "pass"}\n'
            + MARKER.encode()
            + b'{"type": "result", "check": "command.b", "status": "fail"}\n'
            + MARKER.encode()
            + b'{"type": "end"',
        ),
        "record after end": base + line({"type": "result", "check": "command.b", "status": "pass"}),
        "worker out of turn": line({"type": "meta"})
        + line({"type": "worker", "n": 1})
        + line({"type": "worker", "n": 5})
        + base.split(b"\n", 2)[2],
        "result before meta": line({"type": "result", "check": "command.a", "status": "pass"})
        + base,
        "malformed json": base.replace(
            b'{"type": "end"', MARKER.encode() + b'{"check": \n' + b'{"type": "end"'
        ),
        "non-utf-8": base.replace(
            line({"type": "end", "workers": 1}),
            MARKER.encode() + b'{"check": "command.b", "message": "\xff\xfe"}\n',
        ),
        "inventory record": base.replace(
            b'{"type": "end"', b'{"type": "inventory"}\n' + MARKER.encode() + b'{"type": "end"'
        ),
        "unknown record": base + line({"type": "surprise"}),
    }
    for name, data in variants.items():
        ex = conclude_bytes(task, data)
        assert tampered(ex) == ["command.a", "command.b"], (name, statuses(ex))
        assert all(r.status == "error" for r in ex.results), name


def test_a_violation_from_the_probe_taints_the_check_it_names():
    task = command_task("a", "b")
    data = genuine([], [("command.a", 1, "pass"), ("command.b", 1, "fail")])
    pinned = data.replace(
        b'{"type": "end"',
        b'{"type": "violation", "check": "command.b", "attempt": 1, '
        b'"message": "a line on the worker\'s pipe without the worker\'s nonce"}\n'
        + MARKER.encode()
        + b'{"type": "end"',
    )
    ex = conclude_bytes(task, pinned)
    assert (
        tampered(ex) == ["command.b"]
        and "forged line while it ran" in by_check(ex)["command.b"][0].message
    )
    unpinned = pinned.replace(
        b'"check": "command.b", "attempt": 1', b'"check": null, "attempt": null'
    )
    assert tampered(conclude_bytes(task, unpinned)) == ["command.a", "command.b"]


def test_pytest_results_follow_their_run_attempt_once():
    suite = SuiteRef(name="pytest", attempts=2, pytest={"path": "/abs/tests", "in_image": True})
    task = task_for(suite)
    meta = line({"type": "meta"}) + line({"type": "worker", "n": 1})
    run = line(
        {"type": "result", "check": "pytest.run", "attempt": 1, "status": "pass", "kind": "pytest"}
    )
    t1 = line(
        {
            "type": "result",
            "check": "pytest.test_x.test_one",
            "attempt": 1,
            "status": "pass",
            "kind": "pytest",
        }
    )
    end = line({"type": "end", "workers": 1})
    ex = conclude_bytes(task, meta + run + t1 + end)
    assert statuses(ex) == {"pytest.run": [(1, "pass")], "pytest.test_x.test_one": [(1, "pass")]}
    for forged in (
        t1 + run + end,  # a test result before its run
        run + t1 + t1 + end,  # twice
        run + t1.replace(b'"attempt": 1', b'"attempt": 2') + end,
    ):  # for another attempt
        ex = conclude_bytes(task, meta + forged)
        assert tampered(ex) == ["pytest.run"], statuses(ex)
        assert set(by_check(ex)) == {"pytest.run"}  # its per-test results go with it


def test_flood_keeps_what_was_received_and_names_the_cap():
    task = command_task("before", "flood", "after")
    head = (
        line({"type": "meta"})
        + line({"type": "worker", "n": 1})
        + line({"type": "result", "check": "command.before", "attempt": 1, "status": "pass"})
    )
    t = Transcript()
    t.feed(head)
    junk = b"\0" * (8 << 20)
    for _ in range((200 << 20) // len(junk)):  # 200 MB through the probe's stdout
        t.feed(junk)
    t.feed(line({"type": "result", "check": "command.flood", "attempt": 1, "status": "pass"}))
    ex = conclude(t, task, exit_code=0)
    res = {r.check: r for r in ex.results}
    assert res["command.before"].status == "pass"
    assert res["command.flood"].status == "error" and res["command.flood"].message.startswith(
        FLOODED
    )
    assert "cap of 64 MiB" in res["command.flood"].message
    assert res["command.flood"].metrics == {"output_capped": True, "cap_bytes": MAX_TOTAL}
    assert (
        res["command.after"].status == "error" and "cap of 64 MiB" in res["command.after"].message
    )
    assert t.total == MAX_TOTAL and t.discarded > 0 and ex.meta["protocol"]["cut"]


def test_flood_of_marker_lines_hits_the_caps_too():
    task = command_task("a", "b")
    t = Transcript()
    t.feed(line({"type": "meta"}) + line({"type": "worker", "n": 1}))
    t.feed(line({"type": "result", "check": "command.a", "attempt": 1, "status": "pass"}))
    forged = line({"type": "worker", "n": 2}) * 30_000
    t.feed(forged)
    ex = conclude(t, task, exit_code=0)
    # the forged worker records taint the task before the record cap is reached
    assert tampered(ex) == ["command.a", "command.b"]


# -- no false positives on real probe runs ---------------------------------------------


def run_probe(probe_dir, *args):
    proc = subprocess.run(
        [sys.executable, "-m", "valorch_probe", "run", *args],
        cwd=probe_dir,
        capture_output=True,
        timeout=300,
        env={"PYTHONPATH": str(probe_dir), "PATH": "/usr/bin:/bin"},
    )
    return proc.returncode, proc.stdout


def test_real_crashes_timeouts_and_retries_are_never_tampering(probe_dir):
    patterns = [
        "selftest.pass",
        "selftest.abort",
        "selftest.fail",
        "selftest.hang",
        "selftest.noise",
        "selftest.after",
    ]
    suite = SuiteRef(name="selftest", checks=tuple(patterns), attempts=2, deadline=2)
    rc, out = run_probe(
        probe_dir,
        "--suite",
        "selftest",
        "--attempts",
        "2",
        "--deadline",
        "2",
        *[a for p in patterns for a in ("--check", p)],
    )
    ex = conclude_bytes(task_for(suite), out, exit_code=rc)
    assert tampered(ex) == [] and ex.meta["protocol"]["violations"] == [], ex.meta["protocol"]
    assert statuses(ex) == {
        "selftest.pass": [(1, "pass")],
        "selftest.abort": [(1, "crash"), (2, "crash")],
        "selftest.fail": [(1, "fail"), (2, "fail")],
        "selftest.hang": [(1, "timeout"), (2, "timeout")],
        "selftest.noise": [(1, "pass")],
        "selftest.after": [(1, "pass")],
    }


@settings(deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["\ud800", "\udfff", "\udcff", "é", "\U0001f600"]), st.text(max_size=5)
        ),
        max_size=8,
    ).map("".join)
)
def test_every_record_reaches_the_store_as_utf8_whatever_the_probe_escaped(text):
    """JSON may escape a lone surrogate (a message built from a file name decoded with
    surrogateescape, say); no UTF-8 sink holds one: SQLite refused the result row. The
    transcript makes every record's strings well-formed, so the result keeps its verdict and
    the rest of its text, and stores."""
    import sqlite3

    t = Transcript()
    t.feed(
        line(
            {
                "type": "result",
                "check": "smoke.x",
                "status": "pass",
                "attempt": 1,
                "message": text,
                "metrics": {text: text},
            }
        )
    )
    t.close()
    (res,) = t.results
    assert res.status == "pass"
    db = sqlite3.connect(":memory:")
    db.execute("create table r (message text, metrics text)")
    db.execute(
        "insert into r values (?, ?)", (res.message, json.dumps(res.metrics, ensure_ascii=False))
    )
    sent = json.loads(json.dumps(text))  # JSON joins an escaped high + low pair into one character
    kept = [c for c in sent if not 0xD800 <= ord(c) <= 0xDFFF]
    assert [c for c in res.message if c != "\ufffd"] == [c for c in kept if c != "\ufffd"]


def test_the_not_installed_metric_is_the_probes():
    """The probe marks an ``unsupported`` whose module is absent; the transcript keeps such a
    GPU row ``unsupported`` on a CPU image (not ``n/a``) by that same metric name."""
    from orchestrator.executors import transcript
    from valorch_probe import context

    assert transcript.NOT_INSTALLED == context.NOT_INSTALLED
