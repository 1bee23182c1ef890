"""A workload run by the local interpreter (image ``host``) gets an allow-list of valorch's
environment, not its tokens and database URLs; a job passes more by name (``pass_env``);
and the values of valorch's secrets are scrubbed from whatever a workload prints before it
is stored."""

from __future__ import annotations

import json
import textwrap

TOKEN = "ghp_0123456789abcdefSECRET"
PASSWORD = "hunter2-db-password"
SECRETS = {
    "GITHUB_TOKEN": TOKEN,
    "DATABASE_URL": f"postgresql://valorch:{PASSWORD}@db.internal/valorch",
    "NCCL_DEBUG": "WARN",  # allow-listed: the GPU stacks' settings
    "MY_SETTING": "passed-on-purpose",
}


def _job(tmp_path, pass_env: str, commands: str) -> str:
    job = tmp_path / "env.yaml"
    job.write_text(
        textwrap.dedent(f"""
        name: env
        images: [host]
        suites:
          - name: command
            pass_env: {pass_env}
            commands:
        """).lstrip()
        + textwrap.indent(textwrap.dedent(commands).strip() + "\n", " " * 6)
    )
    return str(job)


def _results(cli, job) -> dict[str, dict]:
    # valorch holds secrets a root workload could read in /proc (test_host_workloads_cannot_
    # reach_secrets_or_outlive_the_run.py): accepted here, as the environment is the point
    proc = cli("run", "--job", job, "--json", "--no-gate", "--host-secrets-visible", env=SECRETS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert TOKEN not in proc.stdout and PASSWORD not in proc.stdout
    (run,) = json.loads(proc.stdout)
    return {r["check"]: r for r in run["results"]}


def test_a_host_workload_sees_the_allow_list_and_what_its_job_passes(cli, tmp_path):
    job = _job(
        tmp_path,
        "[MY_SETTING]",
        f"""
        - id: inherited
          argv: [env]
          stdout: ['^MY_SETTING=passed-on-purpose$', '^NCCL_DEBUG=WARN$']
          stdout_not: ['GITHUB_TOKEN', 'DATABASE_URL', '{PASSWORD}']
        """,
    )
    res = _results(cli, job)
    assert res["command.inherited"]["status"] == "pass", res["command.inherited"]


def test_secrets_a_workload_prints_are_scrubbed_before_they_are_stored(cli, tmp_path):
    job = _job(
        tmp_path,
        "[GITHUB_TOKEN, DATABASE_URL]",  # passed on purpose: and printed
        """
        - id: leaks
          argv: [sh, -c, 'echo "the token is $GITHUB_TOKEN, the db $DATABASE_URL"; exit 1']
        """,
    )
    leaks = _results(cli, job)["command.leaks"]
    assert leaks["status"] == "fail", leaks
    assert "the token is ***, the db postgresql://valorch:***@db.internal" in leaks["message"]
    stored = b"".join(p.read_bytes() for p in cli.db.parent.glob(cli.db.name + "*"))
    assert b"the token is ***" in stored  # what was stored is the scrubbed text
    assert TOKEN.encode() not in stored and PASSWORD.encode() not in stored


def test_pass_env_takes_only_variable_names(cli, tmp_path):
    job = tmp_path / "bad.yaml"
    job.write_text(
        "name: bad\nimages: [host]\nsuites:\n  - name: command\n    pass_env: ['A=B']\n"
        "    commands:\n      - id: x\n        argv: [true]\n"
    )
    proc = cli("jobs", "show", str(job))
    assert proc.returncode == 2 and f"{job}:5" in proc.stderr and "pass_env" in proc.stderr


def test_pass_env_on_a_job_with_no_host_image_is_not_silently_ignored(cli, tmp_path):
    job = tmp_path / "containers.yaml"
    job.write_text(
        "name: c\nimages: [cpu_debian12_py3.11_pytorch_2.13]\nsuites:\n  - name: command\n"
        "    pass_env: [HOME]\n    commands:\n      - id: x\n        argv: ['true']\n"
    )
    proc = cli("jobs", "show", str(job))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{job}:5" in proc.stderr and "pass_env" in proc.stderr and "image host" in proc.stderr
