"""Every scheduler recipe in examples/ runs as shipped on a fresh runner: its own commands,
read from the recipe, in its order, on the real engine, with a catalog pinned by digest on
a local registry whose image this engine has never held. Each recipe pulls before its
preflight (which looks for the pinned digest the run uses), runs the job, writes the JUnit
report and builds the site where the recipe publishes it."""

from __future__ import annotations

import json
import subprocess
import uuid

import pytest
import recipes_support as rs
from root_helpers import ROOT, run_cli

pytestmark = pytest.mark.docker

SHELLS = {"github": "bash --noprofile --norc -eo pipefail -c", "gitlab": "bash -eo pipefail -c"}


@pytest.fixture
def runner(tmp_path):
    """(checkout, env, pinned reference): a fresh runner's checkout and environment, with a
    shared store to push to."""
    proc, registry = rs.serve_registry(tmp_path)
    try:
        work, pinned = rs.checkout(tmp_path, registry)
        assert subprocess.run(
            ["docker", "image", "inspect", pinned], capture_output=True
        ).returncode
        env = rs.base_env(work)
        shared = tmp_path / "shared.sqlite"
        assert run_cli("db", "upgrade", "--db", str(shared)).returncode == 0
        env["VALORCH_PUSH_TO"] = str(shared)
        yield work, env, pinned
        rs.forget(pinned)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _site_built(directory):
    index = directory / "index.html"
    assert index.is_file(), f"no site at {directory}"
    assert rs.NIGHTLY_ALIAS in index.read_text() or any(
        rs.NIGHTLY_ALIAS in p.read_text() for p in directory.rglob("*.html")
    )


def _junit_written(work):
    text = (work / "out.xml").read_text()
    assert "<testsuite" in text and "selftest." in text


def _ran_in_order(ran, *words):
    names = [r.step.script for r in ran if r.rc is not None]
    where = [next(i for i, s in enumerate(names) if w in s) for w in words]
    assert where == sorted(where), (words, names)


def test_github_nightly_runs_as_written(runner):
    work, env, _pinned = runner
    job_env, steps = rs.github_steps(
        ROOT / "examples/github-actions/nightly.yml",
        "nightly",
        {"secrets.VALORCH_SHARED_DB": env["VALORCH_PUSH_TO"], "runner.name": "runner-1"},
    )
    job_env["VALORCH_DB"] = env["VALORCH_DB"]  # vars.VALORCH_DB || '/var/lib/…': the runner's
    env = {**env, **job_env, "GITHUB_STEP_SUMMARY": str(work / "summary.md")}
    ran = rs.run_steps(steps, work, env, SHELLS["github"])
    assert not rs.failures(ran), "\n".join(rs.failures(ran))
    _ran_in_order(ran, "images pull", "hosts check", "valorch run", "site build")
    _junit_written(work)
    _site_built(work / "site")
    assert "valorch nightly" in (work / "summary.md").read_text()
    pushed = run_cli("results", "list", "--json", db=env["VALORCH_PUSH_TO"])
    assert pushed.returncode == 0 and json.loads(pushed.stdout), pushed.stderr


def test_github_release_qualification_runs_as_written(runner):
    work, env, _pinned = runner
    # the baseline the release is compared with: an earlier run of the release job
    first = run_cli("run", "--job", "jobs/release.yaml", "--no-matrix", "--json", cwd=work, env=env)
    assert first.returncode == 0, first.stderr[-2000:]
    run_id = json.loads(first.stdout)[0]["run"]
    made = run_cli("baseline", "set", "v0.2", run_id, cwd=work, env=env)
    assert made.returncode == 0, made.stderr
    job_env, steps = rs.github_steps(
        ROOT / "examples/github-actions/release-qualification.yml",
        "qualify",
        {"secrets.VALORCH_SHARED_DB": env["VALORCH_DB"], "inputs.baseline": "v0.2"},
    )
    env = {**env, **job_env, "GITHUB_STEP_SUMMARY": str(work / "summary.md")}
    ran = rs.run_steps(steps, work, env, SHELLS["github"])
    assert not rs.failures(ran), "\n".join(rs.failures(ran))
    _ran_in_order(ran, "images check", "images pull", "hosts check", "valorch qualify")
    report = (work / "qualification" / "report.md").read_text()
    assert "Verdict: ✅ qualified" in report, report


def _pushed(env):
    pushed = run_cli("results", "list", "--json", db=env["VALORCH_PUSH_TO"])
    assert pushed.returncode == 0 and json.loads(pushed.stdout), pushed.stderr


def test_gitlab_ci_nightly_and_pages_run_as_written(runner):
    work, env, _pinned = runner  # VALORCH_PUSH_TO: the masked CI/CD variable the recipe names
    variables, steps = rs.gitlab_steps(ROOT / "examples/gitlab-ci/.gitlab-ci.yml")
    assert variables["VALORCH_DB"].startswith("/var/lib/")  # outside the build directory
    ran = rs.run_steps(steps, work, env, SHELLS["gitlab"])
    assert not rs.failures(ran), "\n".join(rs.failures(ran))
    _ran_in_order(ran, "images pull", "hosts check", "valorch run", "results push")
    _ran_in_order(ran, "valorch run", "site build --out public")
    _junit_written(work)
    _site_built(work / "public")  # what GitLab Pages publishes
    _pushed(env)


def test_jenkins_pipeline_runs_as_written(runner):
    work, env, _pinned = runner
    shared = env.pop("VALORCH_PUSH_TO")  # the agent has none: the pipeline binds its credential
    environment, steps = rs.jenkins_steps(
        ROOT / "examples/jenkins/Jenkinsfile", credentials={"valorch-shared-db": shared}
    )
    assert environment["VALORCH_DB"].startswith("/var/lib/")
    assert environment["VALORCH_PUSH_TO"] == shared
    env = {**env, "VALORCH_PUSH_TO": environment["VALORCH_PUSH_TO"]}
    ran = rs.run_steps(steps, work, env, "sh -xe -c")
    assert not rs.failures(ran), "\n".join(rs.failures(ran))
    _ran_in_order(ran, "images pull", "hosts check", "valorch run", "results push", "site build")
    _junit_written(work)
    _site_built(work / "site")  # what publishHTML serves
    _pushed(env)


def test_jenkins_post_steps_each_run_whatever_failed_before():
    """A failing push or site build skips nothing after it: each post step that can fail is
    a catchError of its own, and the junit and archive steps come first or are not sh."""
    text = (ROOT / "examples/jenkins/Jenkinsfile").read_text()
    post = text.partition("\n    post {")[2]
    for step in ("valorch results push", "valorch site build"):
        before = post[: post.index(step)]
        assert (
            before.rstrip().endswith("sh '.venv/bin/")
            and "catchError(" in before.rsplit("sh '", 2)[-2]
        ), step
    assert post.index("junit ") < post.index("valorch results push")


@pytest.mark.parametrize("recipe", ["nightly.sh", "gitlab", "jenkins"])
def test_recipes_tell_an_unreachable_registry_from_a_moved_tag(tmp_path, recipe):
    """With the registry down, ``images check`` exits 3; the recipes say the registry could
    not be checked, never that a tag moved or vanished (exit 1)."""
    proc, registry = rs.serve_registry(tmp_path)
    try:
        work, _pinned = rs.checkout(tmp_path, registry)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    env = rs.base_env(work)
    if recipe == "nightly.sh":
        done = subprocess.run(
            ["bash", str(ROOT / "examples/nightly.sh")],
            cwd=work,
            env={**env, "VALORCH_CHECKOUT": str(work), "VALORCH_SITE_DIR": str(tmp_path / "w")},
            capture_output=True,
            text=True,
            timeout=600,
        )
        said = done.stderr
    else:
        _, steps = (
            rs.gitlab_steps(ROOT / "examples/gitlab-ci/.gitlab-ci.yml")
            if recipe == "gitlab"
            else rs.jenkins_steps(ROOT / "examples/jenkins/Jenkinsfile", {"valorch-shared-db": ""})
        )
        script = next(
            line
            for step in steps
            for line in step.script.splitlines()
            if "images check" in line and not line.lstrip().startswith("#")
        )
        (ran,) = rs.run_steps([rs.Step("check", script)], work, env, SHELLS["gitlab"])
        assert ran.rc == 0, ran.output  # a warning, not a failed job
        said = ran.output
    assert "the registry could not be checked" in said, said[-2000:]
    assert "moved or vanished" not in said, said[-2000:]


def _unit_settings(text: str) -> tuple[dict[str, str], str]:
    env = dict(
        line.split("=", 2)[1:]
        for line in text.splitlines()
        if line.startswith("Environment=") and "=" in line[len("Environment=") :]
    )
    (command,) = [
        line.split("=", 1)[1] for line in text.splitlines() if line.startswith("ExecStart=")
    ]
    return env, command


def test_systemd_service_runs_as_written(runner, tmp_path):
    work, env, _pinned = runner
    unit = (ROOT / "examples/systemd/valorch-nightly.service").read_text()
    timer = (ROOT / "examples/systemd/valorch-nightly.timer").read_text()
    assert "OnCalendar=" in timer and "Persistent=true" in timer
    settings, command = _unit_settings(unit)
    moved = {"/opt/valorch": str(work), "/var/www/valorch": str(tmp_path / "www")}
    for k, v in settings.items():
        for old, new in moved.items():
            v = v.replace(old, new)
        settings[k] = v
    settings["VALORCH_DB"] = env["VALORCH_DB"]
    for old, new in moved.items():
        command = command.replace(old, new)
    proc = subprocess.run(
        command, shell=True, cwd=work, env={**env, **settings}, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    _junit_written(work)
    _site_built(tmp_path / "www")
    pushed = run_cli("results", "list", "--json", db=env["VALORCH_PUSH_TO"])
    assert json.loads(pushed.stdout), pushed.stderr


def test_cron_line_runs_as_written(runner, tmp_path):
    work, env, _pinned = runner
    lines = [
        line
        for line in (ROOT / "examples/cron/valorch-nightly.cron").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    variables = dict(line.split("=", 1) for line in lines if "=" in line.split()[0])
    (entry,) = [line for line in lines if "=" not in line.split()[0]]
    fields = entry.split(None, 5)
    assert len(fields) == 6 and fields[1] == "2"  # every night at 02:17
    variables.update(
        VALORCH_CHECKOUT=str(work),
        VALORCH_DB=env["VALORCH_DB"],
        VALORCH_SITE_DIR=str(tmp_path / f"www-{uuid.uuid4().hex[:6]}"),
    )
    proc = subprocess.run(
        ["/bin/sh", "-c", fields[5]], cwd=tmp_path, env={**env, **variables}, capture_output=True
    )
    log = (work / "nightly.log").read_text()
    assert proc.returncode == 0, log[-4000:]
    _junit_written(work)
    _site_built(tmp_path / variables["VALORCH_SITE_DIR"])
