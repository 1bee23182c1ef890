"""Each make target that runs a part of the tests collects it without an error in the
environment that target installs: `make quick` installs `.[test]` only (no PyTorch, psycopg,
kubernetes or TensorFlow), `make cli` `.[test,torch]`. A test module that imports an extra's
package at collection (psycopg, kubernetes) breaks the group even when its tests are
deselected.

How the environment is made: not a fresh virtual environment per target (a pip install of
the extras takes minutes, and needs the package index), but this interpreter with the
packages the target does not install made unimportable (``None`` in ``sys.modules``, set by
a ``sitecustomize`` on the collection's path). What is blocked is derived from the Makefile
(each target's marker expression and its environment's ``pip install -e '.[EXTRAS]'``) and
pyproject.toml (each extra's requirements), less what the installed extras require
themselves (numpy comes with scipy). `make unit` and `make test` install every extra: the
suite itself runs in their environment."""

from __future__ import annotations

import importlib.metadata as md
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAKEFILE = (ROOT / "Makefile").read_text()
#: the targets whose environment lacks some extra, and so must collect in it
TARGETS = ("quick", "cli")
#: distributions whose module is not their name, for where they are not installed to say so
MODULE_OF = {"tensorflow-cpu": "tensorflow"}
COLLECT = (sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider")


def variables() -> dict[str, str]:
    return dict(re.findall(r"^([A-Z_]+) *:= *(.*)$", MAKEFILE, re.MULTILINE))


def expand(text: str) -> str:
    values = variables()
    while m := re.search(r"\$\(([A-Z_]+)\)", text):
        if m.group(1) not in values:
            break
        text = text.replace(m.group(0), values[m.group(1)])
    return text


def recipe(rule: str) -> list[str]:
    m = re.search(rf"^{re.escape(rule)}:(.*)\n((?:\t.*\n)*)", MAKEFILE, re.MULTILINE)
    assert m, f"no rule {rule!r} in the Makefile"
    return [m.group(1).strip(), *(line.strip() for line in m.group(2).splitlines())]


def marker_expression(target: str) -> str:
    (pytest_line,) = [c for c in recipe(target)[1:] if "-m pytest" in c]
    m = re.search(r'-m "([^"]+)"', pytest_line.split("-m pytest", 1)[1])
    assert m, pytest_line
    return expand(m.group(1))


def extras(target: str) -> set[str]:
    """The extras of the environment ``target`` depends on (its prerequisite's pip install)."""
    env = recipe(target)[0].split()[0].replace("$(VENV)/", "")
    installs = [c for c in recipe(f"$(VENV)/{env}")[1:] if "pip install" in c]
    found = set()
    for line in installs:
        found |= set(re.search(r"-e '\.\[([^\]]*)\]'", line).group(1).split(","))
    return with_own_extras(found)


def with_own_extras(names: set[str]) -> set[str]:
    """``names`` and the extras they name of valorch itself (``all`` is ``valorch[attest,…]``)."""
    import tomllib

    optional = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    out, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out.add(name)
        for req in optional.get(name, ()):
            if requirement_name(req) == "valorch":
                todo += re.search(r"\[([^\]]*)\]", req).group(1).split(",")
    return out


def requirement_name(req: str) -> str:
    return re.split(r"[\s\[<>=!~;]", req, maxsplit=1)[0].lower().replace("_", "-")


def requires(dist: str, seen: set[str]) -> set[str]:
    """``dist`` and what it requires, transitively, as installed here (extras' own
    requirements of the dependencies left out, as pip leaves them out)."""
    if dist in seen:
        return seen
    seen.add(dist)
    try:
        reqs = md.requires(dist) or []
    except md.PackageNotFoundError:
        return seen
    for req in reqs:
        if "extra ==" not in req:
            requires(requirement_name(req), seen)
    return seen


def blocked(target: str) -> set[str]:
    """The top-level modules of the extras ``target``'s environment does not install."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    optional = project["optional-dependencies"]
    kept: set[str] = set()
    for req in project["dependencies"] + [r for e in extras(target) for r in optional[e]]:
        requires(requirement_name(req), kept)
    left_out = {
        requirement_name(r) for e in set(optional) - extras(target) for r in optional[e]
    } - kept
    modules = {
        module
        for module, dists in md.packages_distributions().items()
        if {d.lower().replace("_", "-") for d in dists} & left_out
    }
    return modules | {MODULE_OF.get(d, d.replace("-", "_")) for d in left_out}


def test_the_quick_group_is_the_one_the_docs_describe():
    satellites = {"attest", "site", "sbom", "notify", "k8s"}
    assert extras("quick") == {"test", "all", *satellites}
    assert extras("cli") == {"test", "torch", "all", *satellites}
    assert {"torch", "psycopg", "tensorflow"} <= blocked("quick")
    assert "numpy" not in blocked("quick")  # scipy, of the test extra, brings it
    assert marker_expression("quick").startswith("not cli and not torch and not (docker")


@pytest.mark.parametrize("target", TARGETS)
def test_each_group_collects_in_its_own_environment(target, tmp_path):
    names = sorted(blocked(target))
    # a finder that answers as a missing package does (ModuleNotFoundError), not a None in
    # sys.modules, which libraries that look there first (scipy, for torch) would misread
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n"
        f"ABSENT = set({names!r})  # not installed by this make target\n"
        "class _Absent:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ABSENT:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "        return None\n"
        "sys.meta_path.insert(0, _Absent())\n"
        "import importlib.util\n"
        "_find_spec = importlib.util.find_spec\n"
        "def find_spec(name, package=None):  # None, as for a package that is not there\n"
        "    if name.split('.')[0] in ABSENT:\n"
        "        return None\n"
        "    return _find_spec(name, package)\n"
        "importlib.util.find_spec = find_spec\n"
    )
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)
    done = subprocess.run(
        [*COLLECT, "-m", marker_expression(target)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, (done.stdout[-6000:], done.stderr[-2000:])
    assert re.search(r"^\d+(/\d+)? tests? collected", done.stdout, re.MULTILINE), done.stdout[
        -2000:
    ]


def test_a_blocked_import_fails_the_collection(tmp_path):
    """The check can fail: a test module that imports a blocked package at collection is an
    error of the collection."""
    (tmp_path / "sitecustomize.py").write_text("import sys\nsys.modules['psycopg'] = None\n")
    (tmp_path / "test_needs_psycopg.py").write_text("import psycopg\n\ndef test_x():\n    pass\n")
    done = subprocess.run(
        [*COLLECT, "-m", "not postgres", str(tmp_path / "test_needs_psycopg.py")],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0 and "psycopg" in done.stdout, done.stdout[-2000:]
