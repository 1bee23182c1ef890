import json

from orchestrator.executors.transcript import MAX_LINE, Transcript, complete
from orchestrator.spec import CheckInfo
from valorch_probe import MARKER


def line(obj):
    return (MARKER + json.dumps(obj) + "\n").encode()


def test_marker_lines_only_and_chunk_boundaries():
    t = Transcript()
    payload = (
        b"hello from a framework\n"
        + line({"type": "meta", "suite": "smoke"})
        + line({"type": "result", "check": "a.b", "status": "pass", "samples": [0.1, 0.2]})
        + b'{"check": "forged", "status": "pass"}\n'
    )
    for i in range(0, len(payload), 7):  # arbitrary chunking
        t.feed(payload[i : i + 7])
    t.close()
    assert [r.check for r in t.results] == ["a.b"]
    assert t.results[0].samples == (0.1, 0.2)
    assert t.meta["suite"] == "smoke" and t.ignored_lines == 2


def test_malformed_and_invalid_results_are_errors_not_exceptions():
    t = Transcript()
    t.feed((MARKER + "{not json\n").encode())
    t.feed(line({"type": "result", "check": "x.y", "status": "great", "attempt": 2}))
    t.feed(line({"type": "result", "check": "x.z", "status": "pass", "surprise": 1}))
    t.feed(line(["a list"]))
    t.close()
    # a result that does not validate is an error of the check it names, at its attempt
    assert [(r.check, r.status, r.attempt) for r in t.results] == [
        ("x.y", "error", 2),
        ("x.z", "error", 1),
    ]
    assert "does not validate" in t.results[0].message
    # what cannot be pinned to a check is a protocol violation for conclude to vet
    bad = [p for k, p in t.events if k == "bad"]
    assert len(bad) == 2 and "malformed marker line" in bad[0] and "not a JSON object" in bad[1]


def test_oversized_line_is_discarded():
    t = Transcript()
    t.feed(MARKER.encode() + b"x" * (MAX_LINE + 10))
    t.feed(b"more of the same line" + MARKER.encode() + b'{"check": "hidden", "status": "pass"}')
    t.feed(b"\n" + line({"type": "result", "check": "ok.one", "status": "pass"}))
    t.close()
    assert [k for k, _ in t.events] == ["bad", "result"] and "longer than" in t.events[0][1]
    assert [r.check for r in t.results] == [
        "ok.one"
    ]  # the marker inside the long line never counts


def test_a_long_line_without_the_marker_is_only_ignored():
    t = Transcript()
    t.feed(b"y" * (3 * MAX_LINE))
    t.feed(b"\n" + line({"type": "result", "check": "ok.one", "status": "pass"}))
    t.close()
    assert [k for k, _ in t.events] == ["result"] and t.ignored_lines == 1


def test_long_message_and_log_are_capped():
    t = Transcript()
    t.feed(
        line(
            {
                "type": "result",
                "check": "a.b",
                "status": "fail",
                "message": "m" * 10_000,
                "log": "start" + "l" * 100_000 + "END",
            }
        )
    )
    t.close()
    res = t.results[0]
    assert len(res.message) == 4000 and len(res.log) == 16000 and res.log.endswith("END")


def test_complete_fills_missing_checks():
    infos = [
        CheckInfo(id="a", feature="A", kind="kernel"),
        CheckInfo(id="b", feature="B", kind="kernel"),
    ]
    t = Transcript()
    t.feed(line({"type": "result", "check": "a", "status": "pass"}))
    t.close()
    done = complete(t.results, infos, "timeout", "killed")
    assert [(r.check, r.status) for r in done] == [("a", "pass"), ("b", "timeout")]
