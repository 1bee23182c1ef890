"""Every headline states the counts that decided it, the same in every sink: a gate that
fails on a check the base never ran says "1 failing" in the terminal, Markdown, HTML and
JSON and nowhere "no regression"; its row carries the fail badge, not "changed". A side is
named with its kind once ("latest:host", never "latest latest:host"). ``latest[:ALIAS]``
is the newest run of a named job, not a newer ad-hoc run, unless --include-adhoc. With
--notify, lost coverage gates by default, so a green post never hides it."""

import json
import threading
import typing
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from root_helpers import run_cli

pytestmark = pytest.mark.cli

WHY = "1 failing (0 regressed, 1 new failure)"  # the base never ran it: a new failure


def _run(db, *checks, job=None, tmp_path=None):
    argv = ["run", "--no-gate", "--no-matrix", "--json"]
    if job:
        path = tmp_path / f"{job}.yaml"
        path.write_text(
            f"name: {job}\nimages: [host]\nsuites:\n  - name: selftest\n    checks: {list(checks)}\n"
        )
        argv += ["--job", str(path)]
    else:
        argv += ["--image", "host", "--suite", "selftest"]
        for c in checks:
            argv += ["--check", c]
    done = run_cli(*argv, db=db)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)[0]["run"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wording")
    db = tmp / "v.sqlite"
    base = _run(db, "selftest.pass", "selftest.noise", job="nightly", tmp_path=tmp)
    head = _run(db, "selftest.pass", "selftest.fail")  # newer, ad-hoc: fail added, noise gone
    return db, base, head


def test_a_failing_gate_says_its_counts_in_every_sink(store):
    db, base, head = store
    term = run_cli("diff", base, head, "--gate-coverage", db=db, env={"COLUMNS": "200"})
    assert term.returncode == 1
    assert "no regression" not in term.stdout + term.stderr
    assert f"GATE FAILED: {WHY}; 1 coverage lost" in term.stdout
    md = run_cli("diff", base, head, "--gate-coverage", "--format", "md", db=db)
    assert f"**{WHY}; 1 coverage lost** (exit 1)" in md.stdout
    assert "no regression" not in md.stdout
    html = run_cli("diff", base, head, "--gate-coverage", "--format", "html", db=db).stdout
    assert f"{WHY}; 1 coverage lost (exit 1)" in html and "no regression" not in html
    gate_rows = html.split('<section id="gate">')[1].split("</section>")[0]
    assert "changed" not in gate_rows.lower().replace("data-kind", "")
    js = json.loads(run_cli("diff", base, head, "--gate-coverage", "--json", db=db).stdout)
    assert js["gate"]["headline"] == f"gate failed: {WHY}; 1 coverage lost"


def test_allowed_reasons_are_counted_and_marked(store):
    db, base, head = store
    done = run_cli("diff", base, head, "--no-gate-coverage", db=db, env={"COLUMNS": "200"})
    assert done.returncode == 1
    assert "1 coverage lost (not gated: --no-gate-coverage)" in done.stdout


def test_a_side_says_its_kind_once(store):
    db, base, _head = store
    done = run_cli("diff", base, "latest:host", db=db, env={"COLUMNS": "200"})
    text = done.stdout + done.stderr
    assert "latest latest" not in text and "latest:host" in text, text
    md = run_cli("diff", "latest:host", "latest:host", "--format", "md", db=db).stdout
    assert "latest `latest:host`" not in md


def test_latest_is_the_newest_named_job_run_unless_asked(store):
    db, base, head = store
    named = json.loads(run_cli("diff", base, "latest:host", "--json", db=db).stdout)
    assert named["head"]["runs"] == [base]  # the ad-hoc run is newer, and left out
    asked = run_cli("diff", base, "latest:host", "--include-adhoc", "--json", db=db)
    assert json.loads(asked.stdout)["head"]["runs"] == [head]


class _Hook(BaseHTTPRequestHandler):
    seen: typing.ClassVar[list] = []

    def do_POST(self):
        _Hook.seen.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


def test_notifying_gates_on_lost_coverage_by_default(tmp_path):
    db = tmp_path / "v.sqlite"
    base = _run(db, "selftest.pass", "selftest.noise")
    head = _run(db, "selftest.pass")
    quiet = run_cli("diff", base, head, db=db)
    assert quiet.returncode == 0  # without a notification: reported, not gated
    server = HTTPServer(("127.0.0.1", 0), _Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        hook = f"http://127.0.0.1:{server.server_port}/hook"
        posted = run_cli("diff", base, head, "--notify", f"slack={hook}", db=db)
    finally:
        server.shutdown()
    assert posted.returncode == 1, posted.stderr
    text = _Hook.seen[-1]["text"]
    assert "FAILURE" in text and "1 coverage lost" in text, text


def test_counts_of_one_are_singular_on_the_site_and_in_the_matrix(store, tmp_path):
    db, _base, _head = store
    built = run_cli("site", "build", "--out", str(tmp_path / "site"), db=db)
    assert built.returncode == 0, built.stderr
    index = (tmp_path / "site" / "index.html").read_text()
    assert "on 1 host," in index and "1 hosts" not in index
    tiers = run_cli("matrix", "render", "--layout", "tiers", "--format", "md", db=db).stdout
    assert "1 environment (image on a host class)" in tiers and "1 environments" not in tiers
    assert "1 image on" in tiers and "image(s)" not in tiers
