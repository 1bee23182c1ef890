import json

from orchestrator.probe import MARKER
from orchestrator.executors.transcript import MAX_LINE, Transcript, complete
from orchestrator.spec import CheckInfo


def line(obj):
    return (MARKER + json.dumps(obj) + "\n").encode()


def test_marker_lines_only_and_chunk_boundaries():
    t = Transcript()
    payload = (b"hello from a framework\n" + line({"type": "meta", "suite": "smoke"})
               + line({"type": "result", "check": "a.b", "status": "pass", "samples": [0.1, 0.2]})
               + b'{"check": "forged", "status": "pass"}\n')
    for i in range(0, len(payload), 7):  # arbitrary chunking
        t.feed(payload[i:i + 7])
    t.close()
    assert [r.check for r in t.results] == ["a.b"]
    assert t.results[0].samples == (0.1, 0.2)
    assert t.meta["suite"] == "smoke" and t.ignored_lines == 2


def test_malformed_and_invalid_results_are_errors_not_exceptions():
    t = Transcript()
    t.feed((MARKER + "{not json\n").encode())
    t.feed(line({"type": "result", "check": "x.y", "status": "great"}))
    t.feed(line({"type": "result", "check": "x.z", "status": "pass", "surprise": 1}))
    t.feed(line(["a list"]))
    t.close()
    statuses = [(r.check, r.status) for r in t.results]
    assert statuses == [("harness.protocol", "error"), ("x.y", "error"), ("x.z", "error"),
                        ("harness.protocol", "error")]
    assert "does not validate" in t.results[1].message


def test_oversized_line_is_discarded():
    t = Transcript()
    t.feed(MARKER.encode() + b"x" * (MAX_LINE + 10))
    t.feed(b"\n" + line({"type": "result", "check": "ok.one", "status": "pass"}))
    t.close()
    assert t.results[0].status == "error" and "longer than" in t.results[0].message
    assert t.results[-1].check == "ok.one"


def test_long_message_and_log_are_capped():
    t = Transcript()
    t.feed(line({"type": "result", "check": "a.b", "status": "fail", "message": "m" * 10_000,
                 "log": "start" + "l" * 100_000 + "END"}))
    t.close()
    res = t.results[0]
    assert len(res.message) == 4000 and len(res.log) == 16000 and res.log.endswith("END")


def test_complete_fills_missing_checks():
    infos = [CheckInfo(id="a", feature="A", kind="kernel"), CheckInfo(id="b", feature="B", kind="kernel")]
    t = Transcript()
    t.feed(line({"type": "result", "check": "a", "status": "pass"}))
    t.close()
    done = complete(t.results, infos, "timeout", "killed")
    assert [(r.check, r.status) for r in done] == [("a", "pass"), ("b", "timeout")]
