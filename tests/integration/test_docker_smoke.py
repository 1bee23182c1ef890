"""The smoke suite through the docker executor on the real engine and the
locally built test images: real torch versions, real numerics."""

import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_json(cli, *args, **kw):
    proc = cli("run", *args, "--json", **kw)
    return proc, json.loads(proc.stdout) if proc.stdout.strip() else []


def results_of(run):
    return {r["check"]: r for r in run["results"]}


@pytest.mark.parametrize(
    "alias,torch_prefix",
    [("cpu_debian12_py3.11_pytorch_1.13", "1.13."), ("cpu_debian12_py3.11_pytorch_2.13", "2.13.0")],
)
def test_smoke_in_test_images(cli, leftover_containers, alias, torch_prefix):
    proc, (run,) = run_json(cli, "--image", alias)
    assert proc.returncode == 0, proc.stderr
    res = results_of(run)
    facts = res["env.facts"]["metrics"]
    assert facts["torch"].startswith(torch_prefix)
    assert (
        facts["os_id"] == "debian"
        and facts["os_version"] == "12"
        and facts["python"].startswith("3.11.")
    )
    assert res["env.version.pytorch"]["status"] == "pass"
    assert (
        res["env.version.os"]["status"] == "pass" and res["env.version.python"]["status"] == "pass"
    )
    assert res["smoke.matmul.fp32"]["status"] == "pass"
    assert res["smoke.matmul.fp32"]["metrics"]["rel_error"] < 1e-4
    assert len(res["smoke.matmul.fp32"]["samples"]) >= 10
    assert run["image"]["digest"].startswith("sha256:")
    assert run["executor"] == "docker"
    assert set(run["timings"]["smoke"]) >= {"create_s", "start_s", "run_s", "total_s"}
    assert leftover_containers() == 0


def test_miscatalogued_image_fails_its_version_check(cli, tmp_path):
    catalog = tmp_path / "images"
    catalog.mkdir()
    (catalog / "wrong.yaml").write_text(
        "family: local-test\nbackend: cpu\nlocal: true\nimages:\n"
        "  - alias: claims_pytorch_2.4\n    reference: valorch/test:pip-torch\n"
        '    components: {pytorch: "2.4.0", python: "3.12", debian: "12"}\n'
    )
    proc, (run,) = run_json(cli, "--image", "claims_pytorch_2.4", "--catalog", str(catalog))
    assert proc.returncode == 1
    res = results_of(run)
    assert res["env.version.pytorch"]["status"] == "fail"
    assert "expected 2.4.0, found 2.13.0" in res["env.version.pytorch"]["message"]
    assert res["env.version.python"]["status"] == "fail"
    assert res["env.version.os"]["status"] == "pass"
    assert res["smoke.matmul.fp32"]["status"] == "pass"


def test_container_deadline_is_timeout_and_leaves_no_container(cli, leftover_containers):
    proc, (run,) = run_json(
        cli,
        "--image",
        "cpu_debian12_py3.11",
        "--suite",
        "selftest",
        "--deadline",
        "60",
        "--timeout",
        "8",
        "--no-gate",
    )
    assert proc.returncode == 0
    res = results_of(run)
    assert res["selftest.pass"]["status"] == "pass"  # reported before the kill
    assert res["selftest.hang"]["status"] == "timeout"
    assert res["selftest.after"]["status"] == "timeout"
    assert "deadline of 8s" in res["selftest.after"]["message"]
    assert leftover_containers() == 0


def test_crash_isolation_inside_a_container_on_python39(cli, leftover_containers):
    _proc, (run,) = run_json(
        cli, "--image", "cpu_debian11_py3.9", "--suite", "selftest", "--deadline", "3", "--no-gate"
    )
    res = results_of(run)
    assert res["env.facts" if "env.facts" in res else "selftest.pass"]["status"] == "pass"
    assert (
        res["selftest.abort"]["status"] == "crash" and "SIGABRT" in res["selftest.abort"]["message"]
    )
    assert res["selftest.segv"]["status"] == "crash"
    assert res["selftest.hang"]["status"] == "timeout"
    assert res["selftest.after"]["status"] == "pass"
    assert "forged" not in res
    assert leftover_containers() == 0


def test_probe_runs_on_python39_without_a_framework(cli):
    proc, (run,) = run_json(cli, "--image", "cpu_debian11_py3.9")
    assert proc.returncode == 0, proc.stderr
    res = results_of(run)
    assert res["env.facts"]["metrics"]["python"].startswith("3.9.")
    assert res["env.version.os"]["status"] == "pass"
    assert res["smoke.matmul.fp32"]["status"] == "unsupported"
    assert "torch is not importable" in res["smoke.matmul.fp32"]["message"]


def test_containers_have_no_network(tmp_path):
    """What the executor promises: network_mode none (checked on a real container)."""
    from orchestrator.executors.docker import DockerExecutor, container_options
    from orchestrator.hosts.detect import detect_local
    from orchestrator.spec import ImageSpec, SuiteRef, Task

    task = Task(
        image=ImageSpec(alias="b", reference="valorch/base:bookworm", backend="cpu"),
        suite=SuiteRef(name="smoke"),
        host=detect_local(),
        checks=(),
    )
    opts = container_options(task, "net-test")
    opts["command"] = ["python3", "-c", "import socket; print(len(socket.if_nameindex()))"]
    client = DockerExecutor(task.host).client
    c = client.containers.create("valorch/base:bookworm", **opts)
    try:
        c.start()
        c.wait(timeout=60)
        assert c.logs(stdout=True, stderr=False).decode().strip() == "1"  # loopback only
        attrs = client.api.inspect_container(c.id)["HostConfig"]
        assert attrs["NetworkMode"] == "none" and attrs["Privileged"] is False
    finally:
        c.remove(force=True)


def test_missing_image_is_infrastructure_error(cli):
    """An absent image with --pull never, under --cpu-only: exit 3 and nothing stored."""
    proc, runs = run_json(
        cli, "--image", "rocm6.3_py3.12_pytorch_2.4", "--cpu-only", "--pull", "never"
    )
    assert proc.returncode == 3 and runs == []
    assert (
        "is not on" in proc.stderr
        and "--pull never" in proc.stderr
        and "Traceback" not in proc.stderr
    )
    listed = cli("results", "list", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout) == []


def test_infrastructure_failure_is_a_run_state_not_error_cells(cli, tmp_path):
    """A local image that is not there: the run is stored in state error, with no result that a
    matrix could show."""
    (tmp_path / "x.yaml").write_text(
        "family: local-test\nbackend: cpu\nlocal: true\nimages:\n"
        "  - alias: gone\n    reference: valorch/test:not-built-here\n"
    )
    proc, (run,) = run_json(cli, "--image", "gone", "--catalog", str(tmp_path), "--retries", "0")
    assert proc.returncode == 3 and run["state"] == "error" and run["results"] == []
    matrix = cli("matrix", "render", "--format", "json")
    assert "gone" not in matrix.stdout


@pytest.mark.parametrize("dockerfile", ["Dockerfile.rocm", "Dockerfile.cuda"])
def test_candidate_dockerfiles_build_against_a_local_base(dockerfile):
    tag = f"valorch/candidate-test:{dockerfile.split('.')[-1]}"
    proc = subprocess.run(
        [
            "docker",
            "build",
            "-q",
            "-f",
            dockerfile,
            "--build-arg",
            "BASE_IMAGE=valorch/base:bookworm",
            "--build-arg",
            "VCS_REF=test",
            "-t",
            tag,
            ".",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    labels = json.loads(
        subprocess.run(
            ["docker", "image", "inspect", "-f", "{{json .Config.Labels}}", tag],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert labels["org.opencontainers.image.base.name"] == "valorch/base:bookworm"
    assert labels["org.opencontainers.image.revision"] == "test"
    subprocess.run(["docker", "rmi", "-f", tag], capture_output=True)


def test_compose_file_is_valid():
    proc = subprocess.run(
        ["docker-compose", "-f", "compose.yaml", "config"], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "/var/run/docker.sock" in proc.stdout


def test_local_test_job_runs_host_and_images(cli):
    proc, runs = run_json(cli, "--job", "jobs/local-test.yaml")
    assert proc.returncode == 0, proc.stderr
    aliases = {r["image"]["alias"] for r in runs}
    assert aliases == {
        "host",
        "cpu_debian12_py3.11_pytorch_1.13",
        "cpu_debian12_py3.11_pytorch_2.13",
        "cpu_debian11_py3.9",
        "cpu_debian12_py3.11",
    }
    md = cli("matrix", "render").stdout
    header = next(line for line in md.splitlines() if line.startswith("| Check"))
    assert "cpu_debian12_py3.11_pytorch_1.13" in header and "host" in header
