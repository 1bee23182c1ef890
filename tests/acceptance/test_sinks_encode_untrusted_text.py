"""Every output sink encodes what valorch did not write, through the real CLI: escape
sequences from a workload never reach the terminal, JUnit stays well-formed XML, HTML tags
from an imported export stay text in Markdown, a workload cannot ping a Slack channel or
show a link there, and no credential leaves the way it should: a class of bugs, closed for every sink."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar
from xml.etree import ElementTree as ET

import pytest
from conftest import run_cli

from orchestrator.spec import CheckResult, HostSpec, ImageSpec
from orchestrator.store import queries
from orchestrator.store.db import open_engine, session_factory
from tests.store_helpers import stored_run

EVIL = (
    "\x1b]52;c;ZXZpbA==\x07 \x1b[2J \x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\ "
    "[link=http://evil.example]rich[/link] [/bold] <!channel> <http://evil.example|Click> "
    "<svg onload=alert(1)> \x9b31m"
)
ESC = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _store(tmp_path, job="j"):
    db = tmp_path / "s.sqlite"
    factory = session_factory(open_engine(str(db)))
    image, host, ids = (
        ImageSpec(alias="img_a", reference="acme/img:1", backend="cpu"),
        HostSpec(name="h1"),
        [],
    )
    with factory() as s:
        for status in ("pass", "fail"):
            run = stored_run(
                s,
                image,
                [
                    CheckResult(
                        check="smoke.tensor_add",
                        status=status,
                        message=EVIL if status == "fail" else "",
                        log=EVIL,
                    )
                ],
                job=job,
                host=host,
            )
            run.state, run.ended = "done", queries.now()
            ids.append(run.id)
        s.commit()
    return db, ids


def test_terminal_output_carries_no_escape_sequence_from_a_workload(tmp_path):
    db, (base, head) = _store(tmp_path, job="nightly\x1b[2J\x1b]52;c;aGk=\x07")
    for argv in (("results", "list"), ("results", "show", head), ("diff", base, head)):
        proc = run_cli(*argv, db=db)
        assert proc.returncode in (0, 1), (argv, proc.stderr)
        for stream in (proc.stdout, proc.stderr):
            assert not ESC.search(stream), (argv, stream)
            assert "Traceback" not in stream
    shown = run_cli("results", "show", head, db=db).stdout
    assert "␛]52;c;ZXZpbA==␇" in shown and "␛[2J" in shown  # visible, not executed


def test_junit_from_a_workload_printing_escapes_is_well_formed(tmp_path):
    db, (base, head) = _store(tmp_path)
    proc = run_cli("diff", base, head, "--format", "junit", db=db)
    assert proc.returncode == 1, proc.stderr
    root = ET.fromstring(proc.stdout.encode())
    failure = root.find(".//failure")
    assert failure is not None and "␛" in ET.tostring(root, encoding="unicode")


def test_markdown_of_an_imported_export_has_no_raw_tag(tmp_path):
    db, (_base, head) = _store(tmp_path)
    export = tmp_path / "e.json"
    assert run_cli("results", "export", head, "--out", str(export), db=db).returncode == 0
    doc = json.loads(export.read_text())
    doc["checks"][0]["feature"] = "<iframe src=javascript:alert(1)></iframe><svg onload=alert(1)>"
    doc["runs"][0]["job"] = "<script>alert(1)</script>"
    export.write_text(json.dumps(doc))
    other = tmp_path / "other.sqlite"
    proc = run_cli("results", "import", str(export), db=other)
    assert proc.returncode == 0, proc.stderr
    for fmt in ("md", "html"):  # (RST has no raw HTML: the property tests parse it)
        proc = run_cli("matrix", "render", "--format", fmt, db=other)
        assert proc.returncode == 0, proc.stderr
        for tag in ("<iframe src=javascript", "<svg onload", "<script>alert"):
            # Markdown shows them as text by a backslash escape, never as an entity
            assert not re.search(r"(?<!\\)" + re.escape(tag), proc.stdout), (fmt, tag)
    md = run_cli("matrix", "render", "--format", "md", db=other).stdout
    assert "\\<iframe src=javascript:alert(1)>" in md and "&lt;" not in md


def test_an_export_with_control_characters_in_names_is_refused(tmp_path):
    db, (_base, head) = _store(tmp_path)
    export = tmp_path / "e.json"
    run_cli("results", "export", head, "--out", str(export), db=db)
    doc = json.loads(export.read_text())
    doc["checks"][0]["feature"] = "tensor add\x1b]52;c;aGk=\x07"
    export.write_text(json.dumps(doc))
    other = tmp_path / "other.sqlite"
    proc = run_cli("results", "import", str(export), db=other)
    assert proc.returncode == 2, proc.stderr
    assert "checks[0].feature" in proc.stderr and "control character U+001B" in proc.stderr
    assert not ESC.search(proc.stderr)


# --- Slack and GitHub, against real HTTP servers on 127.0.0.1 -----------------------------------


class Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list] = []
    redirect_to: str = ""

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.seen.append(
            {
                "server": self.server.server_address[1],
                "path": self.path,
                "json": json.loads(body),
                "headers": dict(self.headers),
            }
        )
        if self.redirect_to and self.path.startswith("/hook"):
            self.send_response(307)
            self.send_header("Location", self.redirect_to)
        else:
            self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def _serve():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


@pytest.fixture
def servers():
    Recorder.seen, Recorder.redirect_to = [], ""
    a, b = _serve(), _serve()
    yield a[1], b[1]
    for httpd, _ in (a, b):
        httpd.shutdown()
        httpd.server_close()


def test_slack_gets_no_mention_or_link_from_a_workload_and_no_password_is_logged(servers, tmp_path):
    db, (base, head) = _store(tmp_path)
    hook = servers[0].replace("http://", "http://user:PASSW0RD@") + "/hook/secret"
    proc = run_cli("diff", base, head, "--notify", f"slack={hook}", db=db)
    assert proc.returncode == 1, proc.stderr
    (posted,) = Recorder.seen
    text = posted["json"]["text"]
    assert "<!channel>" not in text and "<http://evil.example|Click>" not in text
    assert "&lt;!channel&gt;" in text and "<" not in text
    assert not ESC.search(text)
    assert "PASSW0RD" not in proc.stderr + proc.stdout and "secret" not in proc.stderr
    assert f"notified slack {servers[0]}/…" in proc.stderr


def test_a_redirect_to_another_host_is_not_followed_with_the_body(servers, tmp_path):
    db, (base, head) = _store(tmp_path)
    Recorder.redirect_to = servers[1] + "/collect"
    proc = run_cli("diff", base, head, "--notify", f"slack={servers[0]}/hook/secret", db=db)
    assert proc.returncode == 1, proc.stderr  # the regression is still the verdict
    assert [r["server"] for r in Recorder.seen] == [
        int(servers[0].rsplit(":", 1)[1])
    ]  # nothing reached the other
    assert f"redirect to {servers[1]} not followed" in proc.stderr


def test_a_redirect_on_the_same_host_is_followed(servers, tmp_path):
    db, (base, head) = _store(tmp_path)
    Recorder.redirect_to = servers[0] + "/moved"
    proc = run_cli("diff", base, head, "--notify", f"slack={servers[0]}/hook/secret", db=db)
    assert proc.returncode == 1, proc.stderr
    assert [r["path"] for r in Recorder.seen] == ["/hook/secret", "/moved"]
    assert "notified slack" in proc.stderr


def test_the_github_token_goes_only_over_https(tmp_path):
    db, (base, head) = _store(tmp_path)
    env = {
        "GITHUB_TOKEN": "ghs_secretvalue",
        "GITHUB_SHA": "0" * 40,
        "GITHUB_API_URL": "http://ghe.example.com/api/v3",
    }
    proc = run_cli("diff", base, head, "--notify", "github=acme/stack", db=db, env=env)
    assert proc.returncode == 2, proc.stderr
    assert "is not https" in proc.stderr and "ghs_secretvalue" not in proc.stderr
