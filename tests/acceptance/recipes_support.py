"""Running the shipped scheduler recipes (examples/) as their runner would: each recipe's
own commands, read from the file, in its order, with its rules for a failed step (a later
step is skipped unless it always runs; a step allowed to fail does not fail the job). The
CI system itself is not needed: only its commands. Install steps (venv, pip) are the one
thing left out: the checkout gets the tests' own valorch instead."""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from root_helpers import ROOT, VALORCH

REGISTRY = "/usr/bin/docker-registry"
SMALL = "valorch/base:bookworm"  # python3, nothing else: the selftest suite runs in it


@dataclass(frozen=True)
class Step:
    name: str
    script: str
    always: bool = False  # runs after an earlier failure (if: always(), after_script, post)
    may_fail: bool = False  # continue-on-error
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Ran:
    step: Step
    rc: int | None  # None: skipped after an earlier failure
    output: str


def _is_install(script: str) -> bool:
    return "pip install" in script or "-m venv" in script


def _expr(text: str, values: dict[str, str]) -> str:
    """GitHub's ${{ … }} expressions replaced by the test's values (empty when not given)."""
    return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", lambda m: values.get(m.group(1), ""), str(text))


def github_steps(path: Path, job: str, values: dict[str, str]) -> tuple[dict[str, str], list[Step]]:
    """(the job's env, its run steps) of a GitHub Actions workflow."""
    doc = yaml.safe_load(path.read_text())
    spec = doc["jobs"][job]
    env = {k: _expr(v, values) for k, v in (spec.get("env") or {}).items()}
    steps = [
        Step(
            s.get("name", s["run"][:40]),
            s["run"],
            always="always()" in str(s.get("if", "")),
            may_fail=bool(s.get("continue-on-error")),
            env={k: _expr(v, values) for k, v in (s.get("env") or {}).items()},
        )
        for s in spec["steps"]
        if "run" in s and not _is_install(s["run"])
    ]
    return env, steps


def gitlab_steps(path: Path) -> tuple[dict[str, str], list[Step]]:
    """(the global variables, each job's script then after_script) in stage order."""
    doc = yaml.safe_load(path.read_text())
    stages = doc["stages"]
    jobs = [
        (name, spec)
        for name, spec in doc.items()
        if isinstance(spec, dict) and "script" in spec and not name.startswith(".")
    ]
    jobs.sort(key=lambda j: stages.index(j[1].get("stage", "test")))
    steps: list[Step] = []
    for name, spec in jobs:
        always = spec.get("when") == "always"
        script = [line for line in spec["script"] if not _is_install(line)]
        steps.append(Step(name, "\n".join(script), always=always))
        if spec.get("after_script"):
            steps.append(Step(f"{name} after_script", "\n".join(spec["after_script"]), True, True))
    return {k: str(v) for k, v in (doc.get("variables") or {}).items()}, steps


_SH = re.compile(r"""\bsh\s+(?:'''(.*?)'''|'((?:[^'\\]|\\.)*)')""", re.S)


def jenkins_steps(
    path: Path, credentials: dict[str, str] | None = None
) -> tuple[dict[str, str], list[Step]]:
    """(the pipeline's environment, its sh steps): stages in order, then post { always }.
    ``credentials('ID')`` bindings take the test's value for ID, as Jenkins' credentials
    store would give it (an ID the test does not hold fails, as the build would)."""
    text = path.read_text()
    stages, _, post = text.partition("\n    post {")
    head = stages.split("stages {")[0]
    env = dict(re.findall(r"^\s+(VALORCH_\w+) = '([^']*)'", head, re.M))
    for name, cred in re.findall(r"^\s+(\w+) = credentials\('([^']*)'\)", head, re.M):
        assert cred in (credentials or {}), f"the pipeline binds credential {cred!r}"
        env[name] = (credentials or {})[cred]
    steps = [
        Step(f"sh {i}", m.group(1) or m.group(2), always=part is post)
        for part in (stages, post)
        for i, m in enumerate(_SH.finditer(part))
        if not _is_install(m.group(1) or m.group(2))
    ]
    return env, steps


def run_steps(steps: list[Step], cwd: Path, env: dict[str, str], shell: str) -> list[Ran]:
    """Each step in one shell of its own (``shell`` is the runner's: GitHub's bash -eo
    pipefail, GitLab's, Jenkins' sh -xe); after a failure only the steps that always run."""
    ran: list[Ran] = []
    failed = False
    for step in steps:
        if failed and not step.always:
            ran.append(Ran(step, None, ""))
            continue
        proc = subprocess.run(
            [*shlex.split(shell), step.script],
            cwd=cwd,
            env={**env, **step.env},
            capture_output=True,
            text=True,
            timeout=1800,
        )
        ran.append(Ran(step, proc.returncode, proc.stdout[-3000:] + proc.stderr[-3000:]))
        failed = failed or (proc.returncode != 0 and not step.may_fail)
    return ran


def failures(ran: list[Ran]) -> list[str]:
    """Every step that failed or was skipped, with its output (empty when all passed)."""
    return [f"{r.step.name}: rc={r.rc}\n{r.output}" for r in ran if r.rc != 0]


# --- a checkout of the user's repository: its catalog pinned on a local registry --------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_registry(base: Path) -> tuple[subprocess.Popen, str]:
    """Debian's docker-registry on loopback (plain HTTP, which the engine accepts there)."""
    port = free_port()
    config = {
        "version": 0.1,
        "log": {"level": "warn"},
        "http": {"addr": f"127.0.0.1:{port}"},
        "storage": {"filesystem": {"rootdirectory": str(base / f"registry-{port}")}},
    }
    (base / f"registry-{port}.yml").write_text(json.dumps(config))
    proc = subprocess.Popen(
        [REGISTRY, "serve", str(base / f"registry-{port}.yml")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(400):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None, "docker-registry exited"
            time.sleep(0.05)
    return proc, f"127.0.0.1:{port}"


def push(local: str, target: str) -> str:
    """Push ``local`` as ``target``; its manifest digest. The tag is removed here again, so
    the engine holds ``target`` only once a valorch pull brings it (a fresh runner)."""
    subprocess.run(["docker", "tag", local, target], check=True, capture_output=True)
    try:
        out = subprocess.run(
            ["docker", "push", target], check=True, capture_output=True, text=True
        ).stdout
    finally:
        subprocess.run(["docker", "rmi", target], capture_output=True)
    return next(w for w in out.split() if w.startswith("sha256:"))


def forget(reference: str) -> None:
    """Remove what a test pulled (by its own reference only; other tags of the image stay)."""
    subprocess.run(["docker", "rmi", reference], capture_output=True)


NIGHTLY_ALIAS = "rocm6.3_recipe_pytorch_2.4"  # matched by the recipes' rocm6.3_*_pytorch_2.4


def checkout(base: Path, registry: str) -> tuple[Path, str]:
    """A checkout as the recipes expect it (images/, jobs/nightly.yaml, jobs/release.yaml,
    jobs/known-issues.yaml, .venv/bin/valorch, examples/nightly.sh): one image, pushed to
    ``registry`` and pinned by digest, in the family the recipes select; the passing checks of the selftest
    suite. Returns (the checkout, the pinned reference the pull leaves on the engine)."""
    work = base / "checkout"
    (work / ".venv" / "bin").mkdir(parents=True)
    (work / ".venv" / "bin" / "valorch").symlink_to(VALORCH)
    reference = f"{registry}/team/pytorch:nightly"
    digest = push(SMALL, reference)
    (work / "images").mkdir()
    (work / "images" / "rocm.yaml").write_text(
        "family: rocm\nbackend: cpu\nimages:\n"
        f"  - alias: {NIGHTLY_ALIAS}\n    reference: {reference}\n"
        f'    digest: "{digest}"\n'
    )
    (work / "jobs").mkdir()
    for name in ("nightly", "release"):
        (work / "jobs" / f"{name}.yaml").write_text(
            f"name: {name}\nimages: [{NIGHTLY_ALIAS}]\n"
            "suites:\n  - name: selftest\n    checks: [selftest.pass, selftest.noise]\n"
        )
    (work / "jobs" / "known-issues.yaml").write_text("issues: []\n")
    (work / "examples").mkdir()
    (work / "examples" / "nightly.sh").symlink_to(ROOT / "examples" / "nightly.sh")
    return work, f"{registry}/team/pytorch@{digest}"


def base_env(work: Path) -> dict[str, str]:
    """The runner's environment: no VALORCH_* of the developer's, this checkout's catalog."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VALORCH_")}
    env.pop("VALORCH_CATALOG", None)
    env.update(
        {
            "VALORCH_DB": str(work / "runner.sqlite"),
            "DOCKER_CONFIG": str(work / ".docker"),
            "COLUMNS": "200",
        }
    )
    return env
