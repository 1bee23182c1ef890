"""Notifications against a real HTTP server on 127.0.0.1 that checks what arrives: the
Slack-compatible webhook and GitHub's Checks API (its base URL pointed here), retries on
5xx, the conclusions (zero results → failure), and no secret in what valorch prints."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from orchestrator.ext.notify import message
from orchestrator.spec import CheckResult, HostSpec, ImageSpec
from orchestrator.store import queries
from orchestrator.store.db import open_engine, session_factory
from tests.conftest import run_cli

TOKEN = "ghs_s3cr3tT0kenValue"
HOOK = "/services/T000/B000/hooksecretpart"
SHA = "0123456789abcdef0123456789abcdef01234567"


class Recorder(BaseHTTPRequestHandler):
    fail_first: ClassVar[dict] = {}  # path → number of 503 answers before a 2xx
    seen: ClassVar[list] = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.seen.append(
            {"path": self.path, "headers": dict(self.headers), "json": json.loads(body)}
        )
        left = self.fail_first.get(self.path, 0)
        if left:
            self.fail_first[self.path] = left - 1
            self.send_response(503)
        else:
            self.send_response(201 if "check-runs" in self.path else 200)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture
def server():
    Recorder.seen, Recorder.fail_first = [], {}
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _store(tmp_path, head_status="fail", head_results=True):
    db = tmp_path / "n.sqlite"
    factory = session_factory(open_engine(str(db)))
    image = ImageSpec(alias="img_a", reference="acme/img:1", backend="cpu")
    host = HostSpec(name="h1")
    ids = []
    with factory() as s:
        for status in ("pass", head_status):
            run = queries.start_run(
                s,
                batch=queries.now().isoformat(),
                job="j",
                image=image,
                digest="sha256:" + "a" * 64,
                host=host,
                executor="docker",
                spec_hash="x",
                cpu_only=False,
                suites=[],
            )
            if status == "pass" or head_results:
                queries.add_results(
                    s,
                    run.id,
                    None,
                    [
                        CheckResult(
                            check="smoke.tensor_add",
                            status=status,
                            message="wrong sum" if status != "pass" else "",
                        )
                    ],
                )
            run.state, run.ended = "done", queries.now()
            ids.append(run.id)
        s.commit()
    return db, ids


def _env(server):
    return {"GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": server, "GITHUB_SHA": SHA}


def _diff_to_both(server, db, base, head):
    """`valorch diff BASE HEAD` notifying the Slack hook and the GitHub check run."""
    slack, github = f"slack={server}{HOOK}", "github=acme/stack"
    return run_cli(
        "diff", base, head, "--notify", slack, "--notify", github, db=db, env=_env(server)
    )


def test_regression_posts_failure_with_repro_and_retries_5xx(server, tmp_path):
    db, (base, head) = _store(tmp_path)
    Recorder.fail_first = {HOOK: 1, "/repos/acme/stack/check-runs": 2}
    proc = _diff_to_both(server, db, base, head)
    assert proc.returncode == 1, (
        proc.stderr
    )  # the regression gates; both notifications went through
    slack = [r for r in Recorder.seen if r["path"] == HOOK]
    gh = [r for r in Recorder.seen if r["path"] == "/repos/acme/stack/check-runs"]
    assert len(slack) == 2 and len(gh) == 3  # one 503 then 200; two 503 then 201
    body = slack[-1]["json"]
    assert body["text"].startswith("valorch diff") and "FAILURE" in body["text"]
    assert (
        "valorch run --image acme/img@sha256:"
        + "a" * 64
        + " --suite smoke --check smoke.tensor_add"
        in body["text"]
    )
    assert slack[-1]["headers"]["Content-Type"] == "application/json"
    assert "Authorization" not in slack[-1]["headers"]  # the token goes to GitHub only
    run = gh[-1]
    assert run["headers"]["Authorization"] == f"Bearer {TOKEN}"
    assert (
        run["headers"]["Accept"] == "application/vnd.github+json"
        and run["headers"]["X-GitHub-Api-Version"]
    )
    assert run["json"]["head_sha"] == SHA and run["json"]["conclusion"] == "failure"
    assert run["json"]["status"] == "completed" and run["json"]["name"] == "valorch"
    assert (
        "smoke.tensor_add" in run["json"]["output"]["text"]
        and "repro: `valorch run" in run["json"]["output"]["text"]
    )
    for secret in (TOKEN, "hooksecretpart"):
        assert secret not in proc.stderr and secret not in proc.stdout
    assert "notified github acme/stack: failure (HTTP 201)" in proc.stderr


def test_zero_results_is_failure_never_success(server, tmp_path):
    db, (base, head) = _store(tmp_path, head_results=False)
    proc = run_cli("diff", base, head, "--notify", "github=acme/stack", db=db, env=_env(server))
    assert proc.returncode == 2 and "has no results" in proc.stderr
    (run,) = [r["json"] for r in Recorder.seen]
    assert run["conclusion"] == "failure" and "no results" in run["output"]["title"]


def test_no_regression_is_success_and_persistent_5xx_is_exit_3(server, tmp_path):
    db, (base, head) = _store(tmp_path, head_status="pass")
    Recorder.fail_first = {HOOK: 10}
    proc = _diff_to_both(server, db, base, head)
    assert proc.returncode == 3, (
        proc.stderr
    )  # nothing regressed, but a notification could not be delivered
    assert (
        len([r for r in Recorder.seen if r["path"] == HOOK]) == 3
    )  # three tries, then it gives up
    (gh,) = [r["json"] for r in Recorder.seen if "check-runs" in r["path"]]
    assert gh["conclusion"] == "success"
    assert "HTTP 503 after 3 attempt(s)" in proc.stderr and "hooksecretpart" not in proc.stderr


@pytest.mark.parametrize(
    "value, says",
    [
        ("slack=ftp://example.org/x", "not an http(s) URL"),
        ("slack=hooks", "not an http(s) URL"),
        ("github=not a repo", "not OWNER/REPO"),
        ("teams=x", "unknown kind"),
    ],
)
def test_bad_notify_is_exit_2(tmp_path, value, says):
    db, (base, head) = _store(tmp_path)
    proc = run_cli(
        "diff", base, head, "--notify", value, db=db, env={"GITHUB_TOKEN": TOKEN, "GITHUB_SHA": SHA}
    )
    assert proc.returncode == 2 and says in proc.stderr and "Traceback" not in proc.stderr


def test_conclusions():
    reg = (message.Regression("e", "c", "pass → fail", "valorch run …"),)
    assert message.Outcome("t", 0).conclusion == "failure"
    assert message.Outcome("t", 0, infra=True).conclusion == "failure"
    assert message.Outcome("t", 5, infra=True).conclusion == "neutral"
    assert message.Outcome("t", 5, reg, infra=True).conclusion == "failure"
    assert message.Outcome("t", 5).conclusion == "success"
