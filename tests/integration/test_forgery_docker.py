"""Result forgery by declared workloads, on the real engine: a result comes only from the
check that earned it, and a flood through the probe's stdout is survived. Each test runs a
job of command workloads that attack the probe, then reads the stored verdicts back from SQLite.

- As shipped, the attacks cannot reach the probe: workloads run as uid 65534
  and the probe's processes are non-dumpable, so /proc/1/fd/1 and the worker's
  pipe cannot be opened. Every stored verdict is the genuine one.
- Without any capability (no user to drop to) workloads share the probe's uid,
  and the probe's non-dumpable processes still keep their descriptors closed.
- In a deliberately weak container (the probe root with CAP_SYS_PTRACE, no
  CAP_SETUID: no user to drop to, and ptrace access to every process) the
  forged lines do reach the orchestrator; the transcript's vetting turns the
  checks they touch into ``error`` marked tampered, never a forged verdict.
"""

import json
import subprocess
import textwrap

import pytest
from run_support import rows as db_rows
from typer.testing import CliRunner

from orchestrator.executors.transcript import FLOODED, TAMPERED
from valorch_probe import MARKER

IMAGE = "cpu_debian12_py3.11"  # valorch/base:bookworm: Python 3.11, no framework: quick to start


def forged(*records) -> str:
    """A shell command printing protocol lines (quoted for sh: JSON has no single quotes)."""
    return "printf '%s\\n' " + " ".join("'" + MARKER + json.dumps(r) + "'" for r in records)


PROC1 = (
    forged(
        {"type": "result", "check": "command.d", "status": "pass", "attempt": 1},
        {"type": "result", "check": "command.d", "status": "pass", "attempt": 2},
        {"type": "result", "check": "kernels.matmul.fp16", "status": "pass", "kind": "kernel"},
        {"type": "result", "check": "env.facts", "status": "pass"},
    )
    + " > /proc/1/fd/1"
)
WORKER_PIPE = (
    'for f in /proc/$PPID/fd/*; do printf \'%s\\n\' \'RESULT {"check": "command.d", "status": '
    '"pass", "attempt": 1}\' \'BEGIN command.d 1\' > $f 2>/dev/null; done; true'
)
EVERY_PROBE_FD = (
    "for f in /proc/[0-9]*/fd/*; do "
    + forged({"type": "result", "check": "command.d", "status": "pass", "attempt": 1})
    + ' \'RESULT {"check": "command.d", "status": "pass", "attempt": 1}\' > $f 2>/dev/null; done; true'
)
RECORDS = (
    forged(
        {"type": "end", "workers": 1},
        {"type": "meta", "probe_version": "9"},
        {"type": "worker", "n": 9},
        {"type": "violation", "check": None, "message": "forged"},
        {"type": "result", "check": "command.d", "status": "pass", "attempt": 3},
    )
    + " > /proc/1/fd/1; printf '"
    + MARKER
    + '{"check": "command.d", "message": "\\377\\376"}\\n\' > /proc/1/fd/1'
)
KILL_PARENT = "kill -9 $PPID; kill -INT 1; kill -TERM 1; true"
# a daemon that leaves the command's process group (setsid) and would forge later;
# the next command passes only if it is gone
DAEMON = (
    "python3 -c \"import os, time; os.setsid(); open('/tmp/valorch-daemon.pid', 'w').write(str(os.getpid())); "
    'time.sleep(60)" & sleep 0.5; true'
)
NO_DAEMON = (
    "p=$(cat /tmp/valorch-daemon.pid) && for i in $(seq 50); do [ -d /proc/$p ] || exit 0; sleep 0.1; done; "
    "exit 1"
)  # killed, and its zombie collected by the probe (PID 1)


def job(tmp_path, commands, attempts=1, name="job.json"):
    spec = {
        "name": "forgery",
        "images": [IMAGE],
        "suites": [
            {
                "name": "command",
                "attempts": attempts,
                "commands": [
                    {"id": i, "argv": ["sh", "-c", script], "timeout": 60} for i, script in commands
                ],
            }
        ],
    }
    path = tmp_path / name
    path.write_text(json.dumps(spec, indent=1))  # JSON is YAML
    return path


def stored(db):
    """(check, attempt) -> (status, message, metrics) of every stored result."""
    found = db_rows(
        db,
        "SELECT c.check_id, r.attempt, r.status, r.message, r.metrics FROM result r "
        'JOIN "check" c ON c.id = r.check_pk ORDER BY r.id',
    )
    return {
        (c, a): (s, m, json.loads(x) if isinstance(x, str) else (x or {}))
        for c, a, s, m, x in found
    }


def probe_meta(db):
    ((meta,),) = db_rows(db, "SELECT meta FROM run")
    return json.loads(meta)["command"]["probe"]


def statuses(rows):
    return {k: v[0] for k, v in rows.items()}


ATTACKS = [
    ("a", PROC1),
    ("b", WORKER_PIPE),
    ("c", EVERY_PROBE_FD),
    ("e", RECORDS),
    ("k", KILL_PARENT),
    ("d", "false"),
]


def test_attacks_cannot_reach_the_probe(cli, tmp_path):
    """The two forgeries (a result line to /proc/1/fd/1, into the worker's pipe) and variants: no stored verdict changes."""
    spec = job(
        tmp_path,
        [
            *ATTACKS,
            ("daemon", DAEMON),
            ("no-daemon", NO_DAEMON),
            ("own-flood", "head -c 200000000 /dev/zero"),
            ("proc1-flood", "head -c 200000000 /dev/zero > /proc/1/fd/1"),
        ],
        attempts=2,
    )
    proc = cli("run", "--job", str(spec), "--json", "--no-matrix")
    assert proc.returncode == 1, proc.stderr[-3000:]  # gate: command.d genuinely fails
    rows = stored(cli.db)
    assert statuses(rows) == {
        ("command.a", 1): "fail",
        ("command.a", 2): "fail",  # sh: cannot create /proc/1/fd/1: Permission denied
        ("command.b", 1): "pass",
        ("command.c", 1): "pass",  # nothing to write to: the loops find no open fd
        ("command.e", 1): "fail",
        ("command.e", 2): "fail",
        ("command.k", 1): "pass",  # its kills were refused: the worker and PID 1 live on
        ("command.d", 1): "fail",
        ("command.d", 2): "fail",  # the genuine verdict, twice
        ("command.daemon", 1): "pass",
        ("command.no-daemon", 1): "pass",  # the setsid daemon was reaped
        ("command.own-flood", 1): "pass",
        ("command.proc1-flood", 1): "fail",
        ("command.proc1-flood", 2): "fail",
    }, rows
    assert "Permission denied" in rows[("command.a", 1)][1]
    assert all(m.get("user") == "uid 65534" for _, _, m in rows.values())
    assert not any(m.get("tampered") for _, _, m in rows.values())
    assert (
        rows[("command.own-flood", 1)][2]["stdout_bytes"] == 200_000_000
    )  # read through, capped in memory
    assert probe_meta(cli.db)["hardening"] == {"probe": "non-dumpable", "workloads": "uid 65534"}
    ((run_id,),) = db_rows(cli.db, "SELECT id FROM run")
    left = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=org.valorch.run={run_id}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert left.split() == []  # the engine is shared: count only this run's containers


# -- the weak container: the second layer ------------------------------------------


def weaken(opts):
    """Root with CAP_SYS_PTRACE, without CAP_SETUID/CAP_SETGID: no unprivileged user,
    and ptrace access to every process (non-dumpable or not)."""
    opts["cap_add"] = [c for c in opts.get("cap_add") or [] if c not in ("SETUID", "SETGID")] + [
        "SYS_PTRACE"
    ]
    opts["cap_drop"] = ["SETUID", "SETGID"]
    opts["user"] = "0"
    return opts


def no_capabilities(opts):
    """Root without any capability: ids cannot change, workloads share the probe's uid."""
    opts["cap_add"], opts["cap_drop"], opts["user"] = [], ["ALL"], "0"
    return opts


@pytest.fixture
def engine_run(monkeypatch, tmp_path):
    """`valorch run` in-process, with the probe containers' options changed by ``change``."""
    import orchestrator.executors.docker as docker_executor
    from orchestrator.cli import app

    real = docker_executor.container_options
    db = tmp_path / "weak.sqlite"

    def run(spec, *flags, change=weaken):
        monkeypatch.setattr(docker_executor, "container_options", lambda *args: change(real(*args)))
        result = CliRunner().invoke(
            app, ["run", "--job", str(spec), "--db", str(db), "--json", "--no-matrix", *flags]
        )
        return result, stored(db)

    return run


def test_without_capabilities_the_same_uid_still_cannot_reach_the_probe(engine_run, tmp_path):
    """No CAP_SETUID: workloads run as root like the probe, whose processes are
    non-dumpable; without CAP_SYS_PTRACE their /proc/PID/fd stay closed."""
    spec = job(
        tmp_path,
        [
            ("a", PROC1),
            ("b", WORKER_PIPE),
            ("daemon", DAEMON),
            ("no-daemon", NO_DAEMON),
            ("d", "false"),
        ],
    )
    result, rows = engine_run(spec, "--no-gate", change=no_capabilities)
    assert probe_meta(tmp_path / "weak.sqlite")["hardening"] == {
        "probe": "non-dumpable",
        "workloads": "uid 0 (the probe's own: cannot change ids here)",
    }
    assert statuses(rows) == {
        ("command.a", 1): "fail",
        ("command.b", 1): "pass",
        ("command.daemon", 1): "pass",
        ("command.no-daemon", 1): "pass",
        ("command.d", 1): "fail",
    }, rows
    assert "Permission denied" in rows[("command.a", 1)][1]
    assert result.exit_code == 0


def test_forged_lines_that_reach_the_orchestrator_are_tampering(engine_run, tmp_path):
    result, rows = engine_run(job(tmp_path, ATTACKS, attempts=2), "--no-gate")
    assert probe_meta(tmp_path / "weak.sqlite")["hardening"]["workloads"].startswith("uid 0 (")
    # results for checks the task does not have: the whole task is tampered, nothing else is kept
    assert set(rows) == {
        (c, 1)
        for c in ("command.a", "command.b", "command.c", "command.e", "command.k", "command.d")
    }, rows
    for status, message, metrics in rows.values():
        assert status == "error" and message.startswith(TAMPERED) and metrics == {"tampered": True}
    assert "'kernels.matmul.fp16', which is not a check of this task" in rows[("command.a", 1)][1]
    assert result.exit_code == 3  # tampered output is never a clean run; 1 with --gate


def test_forgeries_of_the_task_checks_are_pinned_to_them(engine_run, tmp_path):
    proc1_d = (
        forged({"type": "result", "check": "command.d", "status": "pass", "attempt": 1})
        + " > /proc/1/fd/1"
    )
    spec = job(
        tmp_path,
        [("a", proc1_d), ("b", WORKER_PIPE), ("k", KILL_PARENT), ("ok", "true"), ("d", "false")],
    )
    result, rows = engine_run(spec)
    # k killed its worker (a crash of its own) and sent SIGINT/SIGTERM to PID 1, which ignores them
    assert statuses(rows) == {
        ("command.a", 1): "pass",
        ("command.b", 1): "error",
        ("command.k", 1): "crash",
        ("command.ok", 1): "pass",
        ("command.d", 1): "error",
    }, rows
    b, d = rows[("command.b", 1)], rows[("command.d", 1)]
    assert (
        b[1].startswith(TAMPERED)
        and "without the worker's nonce" in b[1]
        and b[2] == {"tampered": True}
    )
    assert (
        d[1].startswith(TAMPERED)
        and "before command.a had finished" in d[1]
        and d[2] == {"tampered": True}
    )
    assert result.exit_code == 1  # --gate is the default


def test_flood_through_the_probes_stdout_keeps_received_results(engine_run, tmp_path):
    """A flood through the probe's stdout: 200 MB to /proc/1/fd/1 (reachable only in the weak container)."""
    spec = job(
        tmp_path,
        [
            ("before", "true"),
            ("flood", "head -c 200000000 /dev/zero > /proc/1/fd/1"),
            ("after", "false"),
        ],
    )
    result, rows = engine_run(spec, "--no-gate")
    assert statuses(rows) == {
        ("command.before", 1): "pass",
        ("command.flood", 1): "error",
        ("command.after", 1): "error",
    }, rows
    flood = rows[("command.flood", 1)]
    assert flood[1].startswith(FLOODED) and "cap of 64 MiB" in flood[1]
    assert flood[2] == {"output_capped": True, "cap_bytes": 64 << 20}
    assert "cap of 64 MiB" in rows[("command.after", 1)][1]
    assert result.exit_code == 3
    again, _ = engine_run(spec)
    assert again.exit_code == 1  # with the gate


# -- a pytest workload on the host executor -----------------------------------------


def test_pytest_workload_forging_on_the_host_is_tampering(cli, tmp_path):
    """The host executor runs workloads as the invoking user. A root user keeps
    CAP_SYS_PTRACE there, so a pytest test can open the probe's stdout: its forged
    lines must then be caught; without that power the open fails."""
    witness = tmp_path / "forged-written"
    (tmp_path / "upstream").mkdir()
    (tmp_path / "upstream" / "test_forge.py").write_text(
        textwrap.dedent(f"""
        import os

        LINES = {
            json.dumps(
                [
                    MARKER + json.dumps(r)
                    for r in (
                        {"type": "result", "check": "pytest.run", "status": "pass", "attempt": 1},
                        {"type": "result", "check": "env.facts", "status": "pass"},
                    )
                ]
            )
        }


        def parent_of(pid):
            with open("/proc/%d/stat" % pid) as fh:
                return int(fh.read().rsplit(")", 1)[1].split()[1])


        def test_forges():
            probe = parent_of(os.getppid())  # pytest <- worker <- probe parent
            try:
                with open("/proc/%d/fd/1" % probe, "w") as out:
                    out.write("\\n".join(LINES) + "\\n")
                open({str(witness)!r}, "w").close()
            except OSError:
                pass
            assert False, "genuinely failing"
        """)
    )
    spec = tmp_path / "job.yaml"
    spec.write_text(
        "name: host-forge\nimages: [host]\nsuites:\n  - name: pytest\n"
        "    pytest: {path: upstream, timeout: 120}\n"
    )
    proc = cli("run", "--job", str(spec), "--json", "--no-matrix", "--no-gate")
    rows = stored(cli.db)
    assert not any(c == "env.facts" for c, _ in rows)
    if witness.exists():  # the forged lines reached valorch: every verdict of the task is tampered
        assert set(rows) == {("pytest.run", 1)} and rows[("pytest.run", 1)][2] == {"tampered": True}
        assert proc.returncode == 3, proc.stderr[-2000:]
    else:  # they could not be written: the genuine verdicts
        assert statuses(rows) == {
            ("pytest.run", 1): "pass",
            ("pytest.test_forge.test_forges", 1): "fail",
        }
        assert proc.returncode == 0
