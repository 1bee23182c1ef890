"""A known issue's url is written into the HTML and Markdown reports as a link: anything but
an http(s) URL (javascript:, data:, a URL with quotes or credentials) is exit 2 naming the
file, line and key, before anything runs."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("url", ["javascript:alert(document.domain)", "data:text/html,x"])
def test_a_known_issue_url_that_is_not_http_is_exit_2(cli, tmp_path, url):
    issues = tmp_path / "known-issues.yaml"
    issues.write_text(f"issues:\n  - check: selftest.fail\n    reason: planted\n    url: '{url}'\n")
    proc = cli("run", "--image", "host", "--suite", "selftest", "--known-issues", str(issues))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{issues}:4" in proc.stderr and "'url'" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not cli.db.exists() or "selftest" not in proc.stdout
