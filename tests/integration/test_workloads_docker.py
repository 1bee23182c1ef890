"""Declared workloads inside a real container: command checks run against the
image's own torch; a pytest workload is shipped with put_archive, and reports
unsupported because the test images have no pytest."""

import json
import textwrap


def test_command_and_pytest_workloads_in_pip_torch(cli, tmp_path, leftover_containers):
    before = leftover_containers()
    (tmp_path / "upstream").mkdir()
    (tmp_path / "upstream" / "test_tiny.py").write_text("def test_one():\n    assert True\n")
    job = tmp_path / "job.yaml"
    job.write_text(
        textwrap.dedent("""
        name: docker-workloads
        images: [cpu_debian12_py3.11_pytorch_2.13]
        suites:
          - name: command
            commands:
              - id: torch-version
                argv: [python3, -c, "import torch; print(torch.__version__)"]
                stdout: ['^2\\.13\\.']
                feature: torch version
              - id: shipped-file
                argv: [python3, -c, "import os; print(sorted(os.listdir('/opt/valorch')))"]
                stdout: ["valorch_probe"]
              - id: no-rocm-smi
                argv: [rocm-smi, --version]
          - name: pytest
            pytest:
              path: upstream/test_tiny.py
              timeout: 120
        """).lstrip()
    )
    proc = cli("run", "--job", str(job), "--json", "--no-gate")
    assert proc.returncode == 0, proc.stderr
    (run,) = json.loads(proc.stdout)
    res = {r["check"]: r for r in run["results"]}
    assert run["executor"] == "docker"
    assert res["command.torch-version"]["status"] == "pass", res["command.torch-version"]
    assert res["command.shipped-file"]["status"] == "pass"
    assert res["command.no-rocm-smi"]["status"] == "unsupported"
    assert "rocm-smi is not on PATH" in res["command.no-rocm-smi"]["message"]
    # the workload reached the container (it is not "not shipped"), but pytest is absent there
    assert res["pytest.run"]["status"] == "unsupported", res["pytest.run"]
    assert "pytest is not installed in this image" in res["pytest.run"]["message"]
    assert set(res) == {
        "command.torch-version",
        "command.shipped-file",
        "command.no-rocm-smi",
        "pytest.run",
    }
    assert leftover_containers() == before


def test_shipped_directory_reaches_the_container(cli, tmp_path):
    """A path that was not shipped is an error ("not shipped"); unsupported (no
    pytest in the image) is only reached once the directory is in the container."""
    (tmp_path / "suite_dir").mkdir()
    (tmp_path / "suite_dir" / "test_a.py").write_text("def test_a():\n    pass\n")
    (tmp_path / "suite_dir" / "__pycache__").mkdir()
    (tmp_path / "suite_dir" / "__pycache__" / "junk.pyc").write_bytes(b"\0")
    job = tmp_path / "job.yaml"
    job.write_text(
        "name: d\nimages: [cpu_debian12_py3.11_pytorch_2.13]\nsuites:\n"
        "  - name: pytest\n    pytest: {path: suite_dir}\n"
    )
    (run,) = json.loads(cli("run", "--job", str(job), "--json", "--no-gate").stdout)
    (res,) = run["results"]
    assert res["check"] == "pytest.run" and res["status"] == "unsupported", res
