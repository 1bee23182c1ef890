"""The site's known-issues page (`valorch site build --known-issues FILE`): each issue says
whether it has expired, whether it can close (with the evidence `valorch known-issues status`
gives) and which stored runs it excused; the index counts them. Real runs of a flaky command
check (tests/acceptance/readiness_support.py)."""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import run_cli
from readiness_support import FAILS, store_fixture  # noqa: F401  # the store fixture

ISSUES = """\
issues:
  - check: command.wobbly
    images: host
    arch: cpu
    reason: the counter fails some runs
  - check: command.steady
    backend: cpu
    reason: was slow once
    expires: 2020-01-01
  - check: command.steady
    arch: [gfx94x]
    reason: only on MI300 hosts
"""


def rows(page: str) -> list[str]:
    body = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [html.unescape(re.sub(r"<[^>]+>", "", r)) for r in body.split("<tr>")[1:]]


def test_the_known_issues_page_says_expired_can_close_and_the_runs_excused(store, tmp_path):
    path = tmp_path / "known-issues.yaml"
    path.write_text(ISSUES)
    out = tmp_path / "site"
    proc = run_cli("site", "build", "--out", str(out), "--known-issues", str(path), db=store[0])
    assert proc.returncode == 0, proc.stderr[-2000:]
    page = (out / "known-issues.html").read_text()
    wobbly, steady, mi300 = rows(page)
    assert "open" in wobbly and "can close" not in wobbly and "expired" not in wobbly
    assert wobbly.count("fails some runs") == 1 and "images host; arch cpu" in wobbly
    excused = re.findall(r'href="runs/([0-9a-f-]+)\.html"', page)
    assert len(excused) == FAILS
    assert all((out / "runs" / f"{r}.html").is_file() for r in excused)
    assert "expired" in steady and "can close" in steady and "2020-01-01" in steady
    assert "passed in every run" in steady and "host@cpu: 16 runs" in steady
    assert "open" in mi300 and "no run of its checks in its scope" in mi300
    index = (out / "index.html").read_text()
    assert "3 known issue(s)</a>: 1 expired, 1 can close" in index


def test_more_runs_than_the_store_holds_keeps_it_open(store, tmp_path):
    path = tmp_path / "known-issues.yaml"
    path.write_text(ISSUES)
    out = tmp_path / "site"
    args = ("site", "build", "--out", str(out), "--known-issues", str(path), "--close-runs", "17")
    proc = run_cli(*args, db=store[0])
    assert proc.returncode == 0, proc.stderr[-2000:]
    steady = rows((out / "known-issues.html").read_text())[1]
    assert "can close" not in steady and "16/16 passed (needs 17)" in steady
    assert "at least 17 runs over the last 14 days" in (out / "known-issues.html").read_text()


def test_without_known_issues_there_is_no_page(store, tmp_path):
    out = tmp_path / "site"
    proc = run_cli("site", "build", "--out", str(out), db=store[0])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not (out / "known-issues.html").exists()
    assert "known issue" not in (out / "index.html").read_text()
