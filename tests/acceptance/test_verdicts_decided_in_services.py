"""The real CLI ends as the services decide (services/outcome.py), with the exit codes and the
closing lines it always had (``valorch diff`` too: 1 "gate failed: …"): ``valorch run`` 0 when its checks pass, 1 when one fails under the
gate, 0 with --no-gate; ``valorch qualify`` 1 "qualification failed against B; see DIR/report.md"
with its reasons, 0 "qualified against B", and 3 when qualified but the notification is lost."""

from __future__ import annotations

import json
import socket

from gate_support import job, publish_baseline, qualify


def test_run_exit_codes_follow_the_gate(cli, tmp_path):
    proc = cli("run", "--image", "host", "--suite", "smoke", "--executor", "host", "--no-matrix")
    assert proc.returncode == 0, proc.stderr
    assert "infrastructure errors" not in proc.stderr and "tampered" not in proc.stderr

    failing = job(tmp_path, "red", [], {"bad": 1})
    proc = cli("run", "--job", str(failing), "--executor", "host", "--no-matrix")
    assert proc.returncode == 1, proc.stderr
    assert "1 fail" in proc.stderr and "infrastructure errors" not in proc.stderr

    proc = cli("run", "--job", str(failing), "--executor", "host", "--no-gate", "--json")
    assert proc.returncode == 0, proc.stderr
    (run,) = json.loads(proc.stdout)
    assert {r["check"]: r["status"] for r in run["results"]} == {"command.bad": "fail"}


def _closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_qualify_says_why_and_exits_as_the_qualification_decides(cli, tmp_path):
    base = job(tmp_path, "rel", ["selftest.pass"])
    publish_baseline(cli, base, "v1", "rel-1")

    proc = qualify(cli, base, "rel-1", tmp_path / "ok")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert proc.stderr.rstrip().splitlines()[-1] == "qualified against rel-1"
    assert json.loads((tmp_path / "ok" / "qualify.json").read_text())["qualified"] is True

    (tmp_path / "next").mkdir()  # the same job, a failing check more
    red = job(tmp_path / "next", "rel", ["selftest.pass", "selftest.fail"])
    proc = qualify(cli, red, "rel-1", tmp_path / "red")
    assert proc.returncode == 1, proc.stderr + proc.stdout
    tail = proc.stderr.rstrip().splitlines()
    at = tail.index(f"qualification failed against rel-1; see {tmp_path / 'red'}/report.md")
    assert tail[at + 1 :] == ["  1 failing in the candidate: host: selftest.fail"]
    done = json.loads((tmp_path / "red" / "qualify.json").read_text())
    assert done["qualified"] is False and done["reasons"] == [tail[-1].strip()]

    proc = cli("diff", "rel-1", "latest:host")  # the same failing check, through diff's gate
    assert proc.returncode == 1, proc.stderr + proc.stdout
    assert proc.stderr.rstrip().splitlines()[-1] == (
        "gate failed: 1 failing (0 regressed, 1 new failure)"
    )

    hook = f"slack=http://127.0.0.1:{_closed_port()}/hook"
    proc = qualify(cli, base, "rel-1", tmp_path / "lost", "--notify", hook)
    assert proc.returncode == 3, proc.stderr + proc.stdout  # the news did not arrive
    assert "qualified against rel-1" in proc.stderr and "error:" in proc.stderr
