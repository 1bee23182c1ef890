"""The job-spec check's pure rules: every mistake of a document at once, in the file's order,
the nearest names, check globs against a suite's ids, executable argv, short-alias globs."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator import yamlio
from orchestrator.catalog.core import Catalog
from orchestrator.catalog.jobcheck import check_document, glob_problem
from orchestrator.spec import executable_problem

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.load(ROOT / "images")


def _check(text: str, catalog: Catalog | None = None):
    return check_document(yamlio.parse(text, Path("job.yaml")), catalog)


def test_mistakes_of_every_kind_at_once_in_the_files_order(catalog):
    checked = _check(
        "name: j\n"
        "images: [host, rocm6.3_py3.10_pytorch_9.*]\n"
        "suites:\n"
        "  - name: command\n"
        "    commands: [{id: a, argvv: [ls]}]\n"
        "  - {name: features, checks: [features.nope], attempts: 0}\n"
        "  - kernals\n",
        catalog,
    )
    assert checked.job is None
    assert [(p.line, p.key) for p in checked.problems] == [
        (2, "images.1"),
        (5, "suites.0.commands.0.argv"),
        (5, "suites.0.commands.0.argvv"),
        (6, "suites.1.attempts"),
        (6, "suites.1.checks.0"),
        (7, "suites.2.name"),
    ]
    said = {p.key: p.message for p in checked.problems}
    assert said["suites.0.commands.0.argvv"] == "unknown key; did you mean 'argv'?"
    assert said["suites.2.name"] == "unknown suite 'kernals'; did you mean 'kernels'?"
    assert "matches no check of suite features" in said["suites.1.checks.0"]
    assert "did you mean rocm6.3_py3.10_pytorch_2.4" in said["images.1"]


def test_a_valid_spec_has_its_job_and_images(catalog):
    checked = _check("name: j\nimages: ['cpu_py3.11_pytorch_*']\nsuites: [smoke]\n", catalog)
    assert checked.ok and checked.job is not None
    assert [i.alias for i in checked.images] == [
        "cpu_debian12_py3.11_pytorch_1.13_broken_torchvision",
        "cpu_debian12_py3.11_pytorch_1.13",
        "cpu_debian12_py3.11_pytorch_2.13",
    ]


def test_declared_checks_are_the_ids_a_glob_selects_from():
    text = (
        "name: j\nimages: [host]\nsuites:\n  - name: command\n    commands: [{id: a, argv: [ls]}]\n"
    )
    assert _check(text + "    checks: ['command.a']\n").ok
    bad = _check(text + "    checks: ['command.b']\n")
    assert [p.message for p in bad.problems] == [
        "check glob 'command.b' matches no check of suite command; nearest: command.a"
    ]


@pytest.mark.parametrize(
    "pattern,why",
    [
        ("smoke.*", None),
        ("smoke.tensor_ad?", None),
        ("smoke.[t]ensor_add", None),
        ("smoke.[tensor", "has a [ at character 7 that is never closed (it would match nothing)"),
        ("smoke.[z-a]*", "has a reversed range [z-a] (it would match nothing)"),
        ("kernels.*", "matches no check of suite smoke"),
    ],
)
def test_a_glob_that_selects_nothing_is_named(pattern, why):
    ids = ["smoke.tensor_add", "smoke.device"]
    found = glob_problem(pattern, ids, "smoke")
    assert (found is None) if why is None else found.startswith(why), found


@pytest.mark.parametrize(
    "argv,why",
    [
        (("rocminfo",), None),
        (("/opt/rocm/bin/rocminfo", "--all"), None),
        (("./run.sh", ""), None),  # an empty argument after the program is an argument
        (("",), "argv[0] is empty"),
        (("   ",), "argv[0] is empty"),
        ((" ls",), "argv[0] ' ls' begins or ends with white space"),
        (("ls\x00",), "argv[0] holds a NUL character"),
        (("ls", "a\x00b"), "argv[1] holds a NUL character"),
        (("ls -l",), "argv[0] 'ls -l' is not a program name"),
        (("/usr/bin/",), "argv[0] '/usr/bin/' names a directory"),
        (("..",), "argv[0] '..' names a directory"),
        (("ls\x1b[2J",), "argv[0] holds the control character U+001B"),
        (("/" + "a" * 256,), "argv[0] is longer than a path can be"),
    ],
)
def test_an_argv_that_cannot_be_executed_is_named(argv, why):
    found = executable_problem(argv)
    assert (found is None) if why is None else found.startswith(why), found


def test_a_glob_over_short_aliases_matches_and_a_miss_names_the_nearest(catalog):
    assert [i.alias for i in catalog.select(["rocm6.3_py3.9_pytorch_1.*"])] == [
        "rocm6.3_ubuntu22.04_py3.9_pytorch_1.13",
        "rocm6.3_ubuntu20.04_py3.9_pytorch_1.13",
    ]
    with pytest.raises(Exception, match="matches no image; did you mean family:rocm"):
        catalog.select(["family:rocn"])
