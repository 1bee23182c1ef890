"""Faults named for what they are: a database in memory (which would keep nothing) is exit 2
for every command that opens the store; a known-issues glob fnmatch would read as nothing
(an unclosed [, a reversed range) is exit 2 naming the file, line and pattern."""

from __future__ import annotations

import pytest

IN_MEMORY = ["sqlite://", "sqlite:///", "sqlite:///:memory:", "sqlite:///x.db?mode=memory"]
WRITERS = [
    ("run", "--image", "host", "--suite", "selftest", "--check", "selftest.pass"),
    ("db", "upgrade"),
    ("results", "list"),
]


@pytest.mark.parametrize("db", IN_MEMORY)
@pytest.mark.parametrize("argv", WRITERS, ids=lambda a: a[0])
def test_a_database_in_memory_is_refused(cli, tmp_path, db, argv):
    proc = cli(*argv, "--db", db, db=None, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "in memory keeps nothing" in proc.stderr, proc.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written, not even x.db


@pytest.mark.parametrize(
    ("pattern", "why"),
    [("selftest.[fail", "never closed"), ("selftest.[z-a]*", "reversed range")],
)
def test_a_known_issue_glob_that_matches_nothing_is_exit_2(cli, tmp_path, pattern, why):
    issues = tmp_path / "known-issues.yaml"
    issues.write_text(f"issues:\n  - reason: planted\n    check: '{pattern}'\n")
    proc = cli("run", "--image", "host", "--suite", "selftest", "--known-issues", str(issues))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{issues}:3" in proc.stderr and pattern in proc.stderr and why in proc.stderr
