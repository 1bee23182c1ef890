"""Every path of this repository that the docs name exists: in docs/*.md, README.md and the
module docstrings of the product, a path that starts at a top-level folder
(``orchestrator/...``, ``valorch_probe/...``, ``tests/...``, ``scripts/...``, ``docs/...``,
``bench/...``) names a file or folder that is there, so that a reader following it never
lands nowhere after a module moves. A glob names at least one file; ``module.name`` names
an attribute of an existing module."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import ROOT

PATH = re.compile(
    r"(?<![\w./-])((?:orchestrator|valorch_probe|tests|scripts|docs|bench)/[\w./*-]*[\w*/])"
)
# paths that are not this repository's: a user's own checkout shown as an example, and
# ROCm/rocm-install-on-linux's install guide (orchestrator/catalog/rst_tags.py reads it)
EXAMPLES = {"tests/x.py", "docs/install/3rd-party/pytorch-install.rst"}


def _texts() -> list[tuple[Path, str]]:
    found = [(p, p.read_text(encoding="utf-8")) for p in sorted(ROOT.glob("docs/*.md"))]
    found.append((ROOT / "README.md", (ROOT / "README.md").read_text(encoding="utf-8")))
    for pkg in ("orchestrator", "valorch_probe"):
        for p in sorted((ROOT / pkg).rglob("*.py")):
            doc = ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")), clean=False)
            if doc:
                found.append((p, doc))
    return found


def named_paths(text: str) -> list[str]:
    return [m.group(1).rstrip("./") for m in PATH.finditer(text)]


def exists(path: str, root: Path = ROOT) -> bool:
    if "*" in path:
        return any(root.glob(path))
    if (root / path).exists():
        return True
    module, _, attribute = path.rpartition(".")  # valorch_probe/sandbox.make_cache_dirs
    return bool(module) and attribute.isidentifier() and (root / f"{module}.py").is_file()


def test_every_repository_path_the_docs_name_exists():
    missing = [
        f"{where.relative_to(ROOT)}: {path}"
        for where, text in _texts()
        for path in named_paths(text)
        if path not in EXAMPLES and not exists(path)
    ]
    assert missing == []


def test_the_path_finder_sees_paths_in_prose_and_code_spans(tmp_path):
    (tmp_path / "orchestrator" / "executors" / "slurm").mkdir(parents=True)
    (tmp_path / "orchestrator" / "executors" / "slurm" / "client.py").write_text("")
    text = (
        "`orchestrator/executors/slurm.py` turns a task's needs into sbatch options; "
        "see orchestrator/executors/slurm/client.py, tests/unit/test_*.py and "
        "(orchestrator/executors/slurm/client.run_slurm)."
    )
    paths = named_paths(text)
    assert paths == [
        "orchestrator/executors/slurm.py",
        "orchestrator/executors/slurm/client.py",
        "tests/unit/test_*.py",
        "orchestrator/executors/slurm/client.run_slurm",
    ]
    assert [exists(p, tmp_path) for p in paths] == [False, True, False, True]
