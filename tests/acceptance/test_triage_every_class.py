"""Every red cell says why, against the real engine and the real local registry, each
situation made to happen for real:

- a nightly tag in the registry moves from vfmath 1.0 (valorch/test:culprit-good) to a broken
  1.1 (culprit-bad): the vfmath check that passed on the previous digest is a regression when
  the run ends, and an image drift (with the inventory diff of the two digests) against a base
  that ran the old digest, or a catalog that pins it;
- a command check that fails on its first attempt and passes on its second (a marker file in the
  container's /tmp, ``attempts: 2``) is flaky;
- a check that always failed is "never passed", one seen for the first time a "new check";
- an image that cannot start (no files at all) leaves its suite in an infrastructure error;
- a host that declares an AMD GPU it does not have fails its L0 preflight after its run had a
  failing check: a host fault, recorded in the run's meta.

The second batch (one ``valorch run``) holds regression, flaky, never passed, new check and
infrastructure; the diff against the first adds image drift; host fault is its own batch (a host
that fails preflight is the likelier cause of every failure of its run)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from registry_support import registry_basic, run_cli  # noqa: F401 (pytest fixtures: requested by name)
from vfmath_support import BAD, GOOD, job, need_images

pytestmark = pytest.mark.docker

ALWAYS_FALSE = """      - id: always-false
        argv: [python3, -c, "raise SystemExit(1)"]
"""
FRESH_FALSE = """      - id: fresh-false
        argv: [python3, -c, "raise SystemExit(3)"]
"""
FLIP = """      - id: flip
        argv: [sh, -c, "test -e /tmp/triage-flip || { touch /tmp/triage-flip; exit 1; }"]
"""


def runs_of(env: dict) -> list[dict]:
    return json.loads(run_cli("results", "list", "--json", env=env).stdout)


def new_runs(env: dict, before: list[dict]) -> list[dict]:
    seen = {r["run"] for r in before}
    return [r for r in runs_of(env) if r["run"] not in seen]


def show(env: dict, run: str, *extra: str) -> dict:
    p = run_cli("results", "show", run, "--json", *extra, env=env)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.fixture(scope="module")
def world(registry_basic, tmp_path_factory):  # noqa: F811 (the parameter is the fixture imported above)
    need_images()
    reg = registry_basic
    tmp = tmp_path_factory.mktemp("triage")
    env = {**reg.env(), "VALORCH_DB": str(tmp / "v.sqlite")}
    nostart = f"valorch/triage-nostart-{uuid.uuid4().hex[:8]}:v1"
    (tmp / "empty.tar").write_bytes(
        b"\0" * 10240
    )  # an empty tar archive: an image without a single file
    subprocess.run(
        ["docker", "import", str(tmp / "empty.tar"), nostart], check=True, capture_output=True
    )
    tag = f"{reg.host}/triage/app:nightly"
    catalog = tmp / "images"
    catalog.mkdir()
    (catalog / "app.yaml").write_text(
        f"family: t\nbackend: cpu\nimages:\n  - alias: app\n    reference: {tag}\n"
    )
    (catalog / "nostart.yaml").write_text(
        f"family: n\nbackend: cpu\nlocal: true\nimages:\n  - alias: nostart\n"
        f"    reference: {nostart}\n"
    )
    (tmp / "job1.yaml").write_text(job("nightly", "app", ALWAYS_FALSE))
    second = job("nightly", "app", ALWAYS_FALSE + FRESH_FALSE + FLIP).replace(
        "images: [app]", "images: [app, nostart]"
    )
    (tmp / "job2.yaml").write_text(
        second.replace("  - name: command\n", "  - name: command\n    attempts: 2\n")
    )
    digests, batches = [], []
    try:
        for src, job_file in ((GOOD, "job1.yaml"), (BAD, "job2.yaml")):
            digests.append(reg.push(src, "triage/app:nightly"))  # the second push moves the tag
            # each digest's inventory, stored (what an image drift attaches)
            p = run_cli(
                "inventory",
                "audit",
                "--image",
                "app",
                "--catalog",
                str(catalog),
                "--pull",
                "always",
                "--format",
                "json",
                env=env,
            )
            assert p.returncode in (0, 1), p.stderr
            before = runs_of(env)
            p = run_cli(
                "run",
                "--job",
                str(tmp / job_file),
                "--catalog",
                str(catalog),
                "--pull",
                "always",
                "--no-gate",
                "--no-matrix",
                env=env,
            )
            assert "Traceback" not in p.stderr, p.stderr
            batches.append(
                {r["image"]: r["run"] for r in new_runs(env, before) if r["job"] != "inventory"}
            )
        yield {
            "env": env,
            "tmp": tmp,
            "catalog": catalog,
            "digests": digests,
            "batches": batches,
            "tag": tag,
        }
    finally:
        # the references valorch pulled (by tag and by digest), untagged only: the images are the test images
        listed = subprocess.run(
            [
                "docker",
                "images",
                "--digests",
                "--format",
                "{{.Repository}} {{.Tag}} {{.Digest}}",
                "--filter",
                f"reference={reg.host}/triage/app",
            ],
            capture_output=True,
            text=True,
        )
        refs = [
            ref
            for repo, name, digest in (line.split() for line in listed.stdout.splitlines())
            for ref in (f"{repo}:{name}", f"{repo}@{digest}")
            if "<none>" not in ref
        ]
        subprocess.run(["docker", "rmi", nostart, *refs], capture_output=True)


def test_each_class_of_one_batch_is_stored_when_it_ends(world):
    env, (first, second) = world["env"], world["batches"]
    d1, d2 = world["digests"]
    assert d1 != d2
    one = show(env, first["app"])
    assert (
        one["image"]["digest"] == d1
        and one["triage"]["command.always-false"]["class"] == "new check"
    )
    two = show(env, second["app"])
    assert two["image"]["digest"] == d2
    why = two["triage"]
    assert why["command.vfmath-dot"]["class"] == "regression", why
    assert why["command.vfmath-dot"]["digests"] == [d1, d2] and why["command.vfmath-dot"]["runs"][
        :2
    ] == [first["app"], second["app"]]
    assert why["command.always-false"]["class"] == "never passed"
    assert why["command.fresh-false"]["class"] == "new check"
    assert why["command.flip"]["class"] == "flaky" and "fail, pass" in why["command.flip"]["reason"]
    broken = show(env, second["nostart"])["triage"]
    assert broken["suite command"]["class"] == "infrastructure", broken
    assert "never reported" in broken["suite command"]["reason"]
    # the classes of the batch, for the record
    print(
        json.dumps(
            {**{k: v["class"] for k, v in why.items()}, "nostart suite command": "infrastructure"}
        )
    )
    # the text of results show says the same
    text = run_cli("results", "show", second["app"], env=env)
    assert (
        "command.flip: flaky: mixed outcomes across this run's attempts (fail, pass)" in text.stdout
    )
    # and the run page of the site
    site = world["tmp"] / "site"
    p = run_cli("site", "build", "--out", str(site), "--catalog", str(world["catalog"]), env=env)
    assert p.returncode == 0, p.stderr
    page = (site / "runs" / f"{second['app']}.html").read_text()
    assert '<div class="why"><strong>regression</strong>: passed on the previous digest' in page
    assert "<strong>flaky</strong>: mixed outcomes" in page


def test_diff_against_the_old_digest_names_the_image_drift_with_the_inventory_diff(world):
    env, (first, second) = world["env"], world["batches"]
    d1, d2 = world["digests"]
    p = run_cli("diff", first["app"], second["app"], "--json", env=env)
    assert p.returncode == 1, p.stderr  # the vfmath check regressed
    changes = {c["check"]: c for c in json.loads(p.stdout)["changes"]}
    drift = changes["command.vfmath-dot"]["triage"]
    assert drift["class"] == "image drift" and drift["digests"] == [d1, d2], drift
    assert "the tag moved" in drift["reason"] and first["app"][:8] in drift["reason"]
    assert any("pip:vfmath: 1.0 -> 1.1" in d for d in drift["details"]), drift["details"]
    term = run_cli("diff", first["app"], second["app"], env={**env, "COLUMNS": "400"})
    assert "why: image drift" in term.stdout
    md = run_cli("diff", first["app"], second["app"], "--format", "md", env=env)
    assert "why: image drift: the image ran as" in md.stdout
    html = run_cli("diff", first["app"], second["app"], "--format", "html", env=env)
    assert (
        '<div class="triage" data-triage="image drift">why: <strong>image drift</strong>'
        in (html.stdout)
        and "pip:vfmath: 1.0 -&gt; 1.1" in html.stdout
    )
    # the notification says it too (a Slack-compatible webhook on 127.0.0.1)
    posted = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self):
            posted.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        p = run_cli(
            "diff",
            first["app"],
            second["app"],
            "--notify",
            f"slack=http://127.0.0.1:{httpd.server_port}/h",
            env=env,
        )
    finally:
        httpd.shutdown()
    assert p.returncode == 1 and len(posted) == 1, p.stderr
    assert (
        "`command.vfmath-dot`" in posted[0]["text"]
        and "\n  why: image drift: the image ran as" in posted[0]["text"]
    )
    # a catalog that pins the old digest says the same about the run alone
    pinned = world["tmp"] / "pinned"
    pinned.mkdir(exist_ok=True)
    (pinned / "app.yaml").write_text(
        f"family: t\nbackend: cpu\nimages:\n  - alias: app\n"
        f"    reference: {world['tag']}\n    digest: {d1}\n"
    )
    live = show(env, second["app"], "--catalog", str(pinned))["triage"]["command.vfmath-dot"]
    assert live["class"] == "image drift" and "the catalog" in live["reason"]


def test_host_that_fails_preflight_after_its_run_is_the_host_fault(tmp_path):
    need_images()
    env = {"VALORCH_DB": str(tmp_path / "v.sqlite")}
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text(
        "hosts:\n  - name: fake-mi300\n    endpoint: unix:///var/run/docker.sock\n"
        "    labels: [rocm, gfx942]\n    render_gid: 109\n"
        "    gpus: [{vendor: amd, arch: gfx942, index: 0, render_minor: 128}]\n"
    )
    catalog = tmp_path / "images"
    catalog.mkdir()
    (catalog / "t.yaml").write_text(
        f"family: t\nbackend: cpu\nlocal: true\nimages:\n  - alias: good\n    reference: {GOOD}\n"
    )
    (tmp_path / "job.yaml").write_text(job("hostfault", "good", ALWAYS_FALSE))
    p = run_cli(
        "run",
        "--job",
        str(tmp_path / "job.yaml"),
        "--catalog",
        str(catalog),
        "--hosts",
        str(hosts),
        "--no-gate",
        "--no-matrix",
        env=env,
    )
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    (run,) = runs_of(env)
    assert run["host"] == "fake-mi300"
    got = show(env, run["run"])
    fault = got["triage"]["command.always-false"]
    assert fault["class"] == "host fault" and fault["hosts"] == ["fake-mi300"], fault
    assert "L0 preflight after run" in fault["reason"] and "missing /dev/kfd" in fault["reason"]
    assert "command.vfmath-dot" not in got["triage"]  # it passed


def test_qualify_report_says_why_each_red_check_is_red(world):
    env, (first, _) = world["env"], world["batches"]
    out = world["tmp"] / "q"
    p = run_cli(
        "qualify",
        "--job",
        str(world["tmp"] / "job2.yaml"),
        "--baseline",
        first["app"],
        "--catalog",
        str(world["catalog"]),
        "--out-dir",
        str(out),
        env=env,
    )
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr  # the vfmath check regressed
    report = (out / "report.md").read_text()
    assert "why: image drift: the image ran as" in report and "the tag moved" in report
    assert "why: image drift: the image ran as" in (out / "report.junit.xml").read_text()
    page = (out / "report.html").read_text()
    assert 'data-triage="image drift"' in page and 'data-triage="never passed"' in page
    summary = json.loads((out / "qualify.json").read_text())
    assert summary["triage"]["app command.vfmath-dot"]["class"] == "image drift"
    assert summary["triage"]["app command.always-false"]["class"] == "never passed"
