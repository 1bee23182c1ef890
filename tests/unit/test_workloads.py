"""Declared workloads: command checks and pytest workloads from a job spec,
validated with file/line/key errors and run for real on the host executor."""

import json
import textwrap

import pytest

from orchestrator.catalog.core import load_job
from orchestrator.errors import SpecError
from orchestrator.scheduling.plan import suite_checks
from orchestrator.spec import CheckResult
from valorch_probe.checks.pytest_workload import test_id as junit_id


def write_job(tmp_path, body, name="job.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body).lstrip())
    return path


def spec_error(path):
    with pytest.raises(SpecError) as info:
        load_job(path)
    return info.value.message + "\n" + (info.value.hint or "")


def by_check(proc):
    assert proc.stdout.strip(), proc.stderr
    return {r["check"]: r for run in json.loads(proc.stdout) for r in run["results"]}


HEAD = """
name: t
images: [host]
suites:
"""


@pytest.mark.parametrize(
    "suite,key,words",
    [
        (
            """
  - name: command
    commands:
      - id: x
        argv: rocm-smi --version
""",
            "suites.0.commands.0.argv",
            "list of strings, not a shell string",
        ),
        (
            """
  - name: command
    commands:
      - id: x
        argv: [python3]
        stdout: ["(unclosed"]
""",
            "suites.0.commands.0.stdout",
            "does not compile",
        ),
        (
            """
  - name: command
    commands:
      - id: x
        argv: []
""",
            "suites.0.commands.0.argv",
            "at least 1",
        ),
        (
            """
  - name: command
    commands:
      - id: x
        argv: [ls]
        exitcode: 0
""",
            "suites.0.commands.0.exitcode",
            "unknown key",
        ),
        (
            """
  - name: smoke
    commands:
      - {id: x, argv: [ls]}
""",
            "suites.0",
            "belongs to a suite named command",
        ),
        (
            """
  - name: pytest
    pytest:
      path: /abs/test_x.py
""",
            "suites.0.pytest",
            "in_image: true",
        ),
    ],
)
def test_spec_errors_name_file_line_and_key(tmp_path, suite, key, words):
    path = write_job(tmp_path, HEAD + suite)
    msg = spec_error(path)
    assert f"{path}:" in msg and f"key '{key}'" in msg and words in msg, msg
    line = int(msg.split(f"{path}:", 1)[1].split(":", 1)[0])
    assert line >= 4  # inside the suites list, not the top of the file


def test_missing_pytest_path_and_empty_declarations_are_spec_errors(tmp_path, cli):
    path = write_job(
        tmp_path,
        HEAD
        + """
  - name: pytest
    pytest:
      path: upstream/test_nothing_here.py
""",
    )
    msg = spec_error(path)
    assert f"{path}:7: job spec: key 'suites.0.pytest.path'" in msg and "does not exist" in msg, msg
    proc = cli("run", "--job", str(path))
    assert (
        proc.returncode == 2
        and "Traceback" not in proc.stderr
        and "suites.0.pytest.path" in proc.stderr
    )
    proc = cli("run", "--image", "host", "--suite", "command")
    assert (
        proc.returncode == 2
        and "declares nothing" in proc.stderr
        and "Traceback" not in proc.stderr
    )


COMMANDS = (
    HEAD
    + """
  - name: command
    commands:
      - id: hello
        argv: [python3, -c, "print('hello 42')"]
        stdout: ['^hello \\d+$']
        feature: greeting
      - id: wrong-regex
        argv: [python3, -c, "print('hello 42')"]
        stdout: ['^goodbye']
      - id: missing-binary
        argv: [valorch-no-such-binary-here, --version]
      - id: exit-mismatch
        argv: [python3, -c, "import sys; sys.exit(3)"]
      - id: exit-expected
        argv: [python3, -c, "import sys; sys.exit(3)"]
        exit_code: 3
      - id: forbidden-stderr
        argv: [python3, -c, "import sys; sys.stderr.write('warning: deprecated thing')"]
        stderr_not: ['(?i)warning']
      - id: hangs
        argv: [python3, -c, "import time; time.sleep(120)"]
        timeout: 1
"""
)


def test_declared_commands_are_the_expected_checks(tmp_path):
    job = load_job(write_job(tmp_path, COMMANDS))
    infos = suite_checks(job.suites[0])
    assert [i.id for i in infos] == [
        "command.hello",
        "command.wrong-regex",
        "command.missing-binary",
        "command.exit-mismatch",
        "command.exit-expected",
        "command.forbidden-stderr",
        "command.hangs",
    ]
    assert (
        infos[0].feature == "greeting"
        and infos[0].kind == "command"
        and infos[1].feature == "wrong-regex"
    )
    filtered = suite_checks(job.suites[0].model_copy(update={"checks": ("command.exit-*",)}))
    assert [i.id for i in filtered] == ["command.exit-mismatch", "command.exit-expected"]


def test_command_checks_on_the_host(tmp_path, cli):
    proc = cli("run", "--job", str(write_job(tmp_path, COMMANDS)), "--json", "--no-gate")
    assert proc.returncode == 0, proc.stderr
    res = by_check(proc)
    status = {k: v["status"] for k, v in res.items()}
    assert status == {
        "command.hello": "pass",
        "command.wrong-regex": "fail",
        "command.missing-binary": "unsupported",
        "command.exit-mismatch": "fail",
        "command.exit-expected": "pass",
        "command.forbidden-stderr": "fail",
        "command.hangs": "timeout",
    }, res
    assert (
        res["command.hello"]["feature"] == "greeting"
        and res["command.hello"]["metrics"]["exit_code"] == 0
    )
    wrong = res["command.wrong-regex"]["message"]
    assert "stdout does not match /^goodbye/" in wrong and "hello 42" in wrong  # the stdout tail
    assert "valorch-no-such-binary-here is not on PATH" in res["command.missing-binary"]["message"]
    assert "exit code 3, expected 0" in res["command.exit-mismatch"]["message"]
    assert "forbidden" in res["command.forbidden-stderr"]["message"]
    assert "passed its timeout of 1s" in res["command.hangs"]["message"]


TINY_TESTS = """
import pytest


def test_one():
    assert 1 + 1 == 2


class TestMore:
    def test_two(self):
        assert "ab".upper() == "AB"

    def test_wrong(self):
        assert [1, 2] == [1, 3], "lists differ"


@pytest.mark.skip(reason="not on this image")
def test_skipped():
    pass


@pytest.fixture
def broken():
    raise RuntimeError("fixture exploded")


def test_fixture_error(broken):
    pass
"""


def test_pytest_workload_shipped_with_the_job_on_the_host(tmp_path, cli):
    (tmp_path / "upstream").mkdir()
    (tmp_path / "upstream" / "test_tiny.py").write_text(TINY_TESTS)
    job = write_job(
        tmp_path,
        HEAD
        + """
  - name: pytest
    pytest:
      path: upstream/test_tiny.py
      args: [-k, "not nothing_matches_this"]
      timeout: 120
""",
    )
    assert [i.id for i in suite_checks(load_job(job).suites[0])] == ["pytest.run"]
    proc = cli("run", "--job", str(job), "--json", "--no-gate")
    assert proc.returncode == 0, proc.stderr
    res = by_check(proc)
    assert {k: v["status"] for k, v in res.items()} == {
        "pytest.run": "pass",
        "pytest.test_tiny.test_one": "pass",
        "pytest.test_tiny.TestMore.test_two": "pass",
        "pytest.test_tiny.TestMore.test_wrong": "fail",
        "pytest.test_tiny.test_skipped": "skip",
        "pytest.test_tiny.test_fixture_error": "fail",
    }, res
    run = res["pytest.run"]
    assert (
        run["metrics"]["exit_code"] == 1
        and run["metrics"]["tests"] == 5
        and "3 fail" not in run["message"]
    )
    assert "lists differ" in res["pytest.test_tiny.TestMore.test_wrong"]["message"]
    assert "setup/teardown" in res["pytest.test_tiny.test_fixture_error"]["message"]
    assert "not on this image" in res["pytest.test_tiny.test_skipped"]["message"]
    assert all(
        r["kind"] == "pytest" and r["feature"] == "pytest upstream/test_tiny.py"
        for r in res.values()
    )


def test_pytest_collection_error_fails_the_workload(tmp_path, cli):
    (tmp_path / "test_broken.py").write_text(
        "import no_such_module_for_valorch\n\ndef test_x():\n    pass\n"
    )
    job = write_job(
        tmp_path,
        HEAD
        + """
  - name: pytest
    pytest: {path: test_broken.py}
""",
    )
    res = by_check(cli("run", "--job", str(job), "--json", "--no-gate"))
    assert res["pytest.run"]["status"] == "fail" and "collection" in res["pytest.run"]["message"]
    assert res["pytest.test_broken.collection"]["status"] == "error"


def test_junit_names_become_valid_check_ids():
    for classname, name in [
        ("a b.c", "test_x[param with space-1]"),
        ("", "test_y"),
        ("pkg.mod", "test_" + "z" * 400),
        ("m", "test_ünïcode[α]"),
    ]:
        cid = junit_id(classname, name)
        assert len(cid) <= 200 and cid.startswith("pytest.")
        CheckResult(check=cid, status="pass")  # validates against the id alphabet
    assert junit_id("mod.TestA", "test_b[1-2]") == "pytest.mod.TestA.test_b[1-2]"
    assert junit_id("p", "t" * 400) != junit_id("p", "t" * 401)


def _pytest_task(tmp_path, *files: str):
    """A task of a job whose one suite ships ``suite_dir`` (with ``files`` under it)."""
    from orchestrator.catalog.core import HOST_IMAGE
    from orchestrator.spec import HostSpec, Task

    for name in files:
        (tmp_path / "suite_dir" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "suite_dir" / name).write_text("def test_a():\n    pass\n")
    job = load_job(
        write_job(
            tmp_path, HEAD + "  - name: pytest\n    pytest: {path: suite_dir, timeout: 900}\n"
        )
    )
    return Task(
        image=HOST_IMAGE,
        suite=job.suites[0],
        host=HostSpec(name="h"),
        checks=suite_checks(job.suites[0]),
    )


def test_workload_archive_ships_the_directory_without_caches(tmp_path):
    import io
    import tarfile

    from orchestrator.executors.base import probe_args, workload_archives

    task = _pytest_task(tmp_path, "test_a.py")
    (tmp_path / "suite_dir" / "__pycache__").mkdir(parents=True)
    (tmp_path / "suite_dir" / "__pycache__" / "junk.pyc").write_bytes(b"\0")
    with tarfile.open(fileobj=io.BytesIO(workload_archives(task)[0])) as tar:
        names = tar.getnames()
    assert "workloads/suite_dir/test_a.py" in names and not any("__pycache__" in n for n in names)
    args = probe_args(task)
    assert json.loads(args[args.index("--declare") + 1])["pytest"]["path"] == "workloads/suite_dir"
    assert float(args[args.index("--deadline") + 1]) == 930  # the workload's own timeout + 30 s


def test_archives_hold_the_workload_and_the_probe_directories_first(tmp_path):
    """The docker executor copies a workload into the probe's root itself, its directories
    before their files; the Slurm step copies the probe into /opt; the probe's volume holds
    the package's files at its root, the same bytes again."""
    import io
    import tarfile

    from orchestrator.executors.base import probe_archive, probe_package, workload_archives

    task = _pytest_task(tmp_path, "test_a.py", "sub/test_b.py")

    def members(archive: bytes) -> list[tuple[str, bool, bytes | None]]:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            return [
                (m.name, m.isdir(), tar.extractfile(m).read() if m.isfile() else None)
                for m in tar.getmembers()
            ]

    (for_root,) = workload_archives(task)
    names = [n for n, _, _ in members(for_root)]
    assert names[0] == "workloads"
    assert names.index("workloads/suite_dir/sub") < names.index("workloads/suite_dir/sub/test_b.py")
    package, digest = probe_package()
    prefix = "valorch/valorch_probe/"
    in_root = [(n[len(prefix) :], b) for n, d, b in members(probe_archive()) if not d]
    assert [(n, b) for n, d, b in members(package) if not d] == in_root
    assert any(n.startswith("checks/") for n, _ in in_root) and len(digest) == 64
    assert (
        workload_archives(
            _pytest_task(tmp_path, "test_a.py").model_copy(
                update={"suite": task.suite.model_copy(update={"pytest": None})}
            )
        )
        == []
    )
