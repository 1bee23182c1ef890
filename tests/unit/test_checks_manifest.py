"""valorch_probe/checks.json is what the orchestrator knows of the probe's checks: it must be
what the generator writes from the registry, and the orchestrator must read the registry's
suites and checks from it exactly, in run order."""

import json
import subprocess
import sys

import pytest
from conftest import ROOT

from orchestrator.checks_manifest import PATH, declared, info, library_of_kernel, manifest
from orchestrator.spec import CheckInfo


def test_the_manifest_is_what_the_generator_writes():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen-checks-manifest.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_stale_manifest_is_caught(tmp_path):
    stale = tmp_path / "checks.json"
    data = json.loads(PATH.read_text(encoding="utf-8"))
    data["checks"] = data["checks"][1:]
    stale.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "gen-checks-manifest.py"),
            "--check",
            "--out",
            str(stale),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 1 and "out of date" in done.stderr


def test_the_manifest_holds_every_registered_check_in_run_order():
    from valorch_probe.loader import select
    from valorch_probe.registry import CHECKS, SUITES

    select("smoke")  # registers every built-in check
    m = manifest()
    assert list(m.suites) == list(SUITES)
    for name, suite in SUITES.items():
        entries = m.select(name)
        assert [e["id"] for e in entries] == suite.checks
        assert [e["order"] for e in entries] == list(range(1, len(suite.checks) + 1))
    for cid, chk in CHECKS.items():
        assert info(m.checks[cid]) == chk.info(), cid
        assert m.suite_of(cid) == chk.suite
        CheckInfo.model_validate(info(m.checks[cid]))
    assert list(m.checks) == list(CHECKS)


def test_a_glob_selects_as_the_probe_selects():
    from valorch_probe.loader import select

    for suite, patterns in (("smoke", ["env.version.*"]), ("kernels", ["*bf16*", "kernels.conv*"])):
        assert [e["id"] for e in manifest().select(suite, patterns)] == [
            c.id for c in select(suite, patterns)[1]
        ]


RUN_AND_LIST_MODULES = """
import atexit, json, sys
atexit.register(lambda: print("MODULES " + json.dumps(sorted(sys.modules))))
sys.argv = ["valorch", *sys.argv[1:]]
from orchestrator.cli import main
main()
"""


def test_a_host_run_imports_no_check_module_in_the_orchestrator(tmp_path):
    """`valorch run --image host` knows its checks from the manifest: the probe's check
    modules run in the probe's process only, never in the orchestrator's."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            RUN_AND_LIST_MODULES,
            "run",
            "--image",
            "host",
            "--suite",
            "selftest",
            "--check",
            "selftest.pass",
            "--db",
            str(tmp_path / "v.sqlite"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "selftest.pass" in done.stdout
    (line,) = [ln for ln in done.stdout.splitlines() if ln.startswith("MODULES ")]
    modules = json.loads(line[len("MODULES ") :])
    assert "orchestrator.checks_manifest" in modules
    assert [m for m in modules if m.split(".")[0] == "valorch_probe"] == []


DECLARATIONS = (
    ("command", {"commands": [{"id": "ls", "argv": ["ls", "-l"]}]}),
    (
        "command",
        {
            "commands": [
                {"id": "a", "argv": ["true"], "feature": "tools", "exit_code": 3, "version": 2},
                {"id": "b", "argv": ["rocminfo"], "feature": None},
            ]
        },
    ),
    ("pytest", {"pytest": {"path": "/w/tests/test_x.py", "args": []}}),
    ("pytest", {"pytest": {"path": "t.py", "feature": "upstream tests"}}),
    ("command", {}),
)


@pytest.mark.parametrize(("suite", "declaration"), DECLARATIONS)
def test_declared_checks_are_described_from_the_manifest_as_the_probe_builds_them(
    suite, declaration
):
    """The plan describes a job's declared checks from the manifest alone; the probe builds
    the same checks from the same declaration."""
    from valorch_probe.loader import build

    assert declared(suite, declaration) == [c.info() for c in build(suite, declaration)]
    for entry in declared(suite, declaration):
        CheckInfo.model_validate(entry)


def test_declared_checks_filter_by_glob_and_refuse_what_the_suite_cannot_take():
    two = {"commands": [{"id": "a", "argv": ["true"]}, {"id": "b", "argv": ["true"]}]}
    assert [c["id"] for c in declared("command", two, ["command.b"])] == ["command.b"]
    for suite, declaration in (("smoke", two), ("command", {"pytest": {"path": "x"}})):
        with pytest.raises(ValueError, match=f"suite {suite} cannot take"):
            declared(suite, declaration)


def test_the_kernel_table_reads_from_the_manifest_as_the_probe_reads_it():
    from valorch_probe import MARKER, evidence

    names = [
        "Cijk_Ailk_Bljk_SB_MT64x64x8",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
        "void at::native::vectorized_elementwise_kernel",
        "no_library_knows_me",
    ]
    for vendor in ("amd", "nvidia", None):
        assert [library_of_kernel(n, vendor) for n in names] == [
            evidence.library_of_kernel(n, vendor) for n in names
        ]
    assert manifest().marker == MARKER
