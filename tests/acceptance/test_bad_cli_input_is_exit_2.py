"""Inputs a hostile or careless user gives: a malformed PostgreSQL URL, a --check glob that
selects nothing, and a reader that closes the pipe (`valorch diff A B | head -2`)."""

from __future__ import annotations

import subprocess

import pytest
from conftest import ROOT, VALORCH, run_cli

from orchestrator.spec import CheckResult, HostSpec, ImageSpec
from orchestrator.store import queries
from orchestrator.store.db import open_engine, session_factory
from tests.store_helpers import stored_run


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://u:pw@[::1/db",
        "postgresql://u@host:/db",
        "postgresql://u@h:1x/db",
        "postgresql://u:p@h:1:2/db",
    ],
)
def test_a_malformed_postgresql_url_is_exit_2_naming_db_without_the_password(url):
    proc = run_cli("results", "list", "--db", url)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "--db" in proc.stderr and "is not a database URL" in proc.stderr
    assert "pw@" not in proc.stderr and ":p@" not in proc.stderr


def test_a_check_glob_matching_nothing_is_exit_2_with_the_nearest_ids_and_stores_nothing(tmp_path):
    db = tmp_path / "v.sqlite"
    proc = run_cli(
        "run", "--image", "host", "--suite", "selftest", "--check", "selftest.pas", "--db", str(db)
    )
    assert proc.returncode == 2, proc.stderr
    assert (
        "--check 'selftest.pas' matches no check" in proc.stderr and "selftest.pass" in proc.stderr
    )
    assert not db.exists()  # no empty `done` run turning a gate green


def _store(tmp_path, n, base_status, head_status):
    db = tmp_path / "d.sqlite"
    factory = session_factory(open_engine(str(db)))
    image, host, ids = (
        ImageSpec(alias="img_a", reference="acme/img:1", backend="cpu"),
        HostSpec(name="h1"),
        [],
    )
    with factory() as s:
        for status in (base_status, head_status):
            run = stored_run(
                s,
                image,
                [
                    CheckResult(
                        check=f"smoke.check_{i:04d}",
                        status=status,
                        message="wrong" if status == "fail" else "",
                    )
                    for i in range(n)
                ],
                job="j",
                host=host,
            )
            run.state, run.ended = "done", queries.now()
            ids.append(run.id)
        s.commit()
    return db, ids


@pytest.mark.parametrize("base,head,verdict", [("pass", "fail", 1), ("fail", "pass", 0)])
def test_a_closed_pipe_is_not_a_verdict(tmp_path, base, head, verdict):
    """`valorch diff A B | head -2`: the reader closes the pipe after two lines, with far more
    than a pipe's buffer still to write; the exit code stays the diff's verdict (1 only when
    it regressed), with no traceback."""
    db, (a, b) = _store(tmp_path, 1500, base, head)
    proc = subprocess.Popen(
        [VALORCH, "diff", a, b, "--format", "md", "--db", str(db)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    lines = [proc.stdout.readline() for _ in range(2)]
    proc.stdout.close()  # as head does after its lines
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=300) == verdict, err
    assert all(lines) and "Traceback" not in err and "BrokenPipe" not in err
    # the same through the rich terminal renderer
    proc = subprocess.Popen(
        [VALORCH, "diff", a, b, "--db", str(db)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=300) == verdict, err
    assert "Traceback" not in err
