"""How the suite splits over parallel workers (pytest-xdist, ``--dist loadfile``;
docs/testing.md, "Parallel workers").

A file's tests stay together on one worker, so that its module fixtures (a run shared by its
tests, a built image) are made once. The files that use a resource with a fixed place on
this machine share one worker, in one group: a second engine's data root and bridge
(``engine2``, ``small_engine``), the Slurm cluster its script starts (``cluster``). Files whose
resources meet in one file are joined, so that no two workers ever hold one resource."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

# session fixtures whose resource has a fixed name on the machine (a directory, a bridge, daemons)
FIXED_PLACE = ("engine2", "small_engine", "cluster")


def groups(fixtures_by_file: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """Each file's group: its own path, or the joined name of the fixed-place resources it
    uses with every file that shares one of them."""
    parent: dict[str, str] = {r: r for r in FIXED_PLACE}

    def root(r: str) -> str:
        while parent[r] != r:
            r = parent[r]
        return r

    used = {f: sorted({n for n in names if n in parent}) for f, names in fixtures_by_file.items()}
    for resources in used.values():
        for other in resources[1:]:
            parent[root(other)] = root(resources[0])
    members: dict[str, list[str]] = {}
    for r in FIXED_PLACE:
        members.setdefault(root(r), []).append(r)
    return {
        f: "+".join(members[root(resources[0])]) if resources else f
        for f, resources in used.items()
    }


def fixtures_by_file(root: Path, tests: Path) -> dict[str, set[str]]:
    """Each test file (its path from ``root``, as in a node id) and the fixtures it asks for:
    the parameter names of its functions (tests and fixtures), the names given to
    ``usefixtures``/``getfixturevalue``, and ``cluster`` where it starts the Slurm cluster's
    script itself (``scripts/start-slurm.sh``: the same daemons as the fixture's)."""
    out: dict[str, set[str]] = {}
    for path in sorted(tests.rglob("test_*.py")):
        try:
            text = path.read_text()
            tree = ast.parse(text)
        except (OSError, SyntaxError, ValueError):
            continue
        names: set[str] = {"cluster"} if "start-slurm.sh" in text else set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names |= {a.arg for a in [*node.args.posonlyargs, *node.args.args]}
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") in (
                "usefixtures",
                "getfixturevalue",
            ):
                names |= {
                    a.value
                    for a in node.args
                    if isinstance(a, ast.Constant) and isinstance(a.value, str)
                }
        out[path.relative_to(root).as_posix()] = names
    return out


def scheduler(config: Any, log: Any) -> Any:
    """xdist's file scheduler, a file's unit of work being its group (``groups``)."""
    from xdist.scheduler import LoadFileScheduling

    root = Path(str(config.rootpath))
    group = groups(fixtures_by_file(root, root / "tests"))

    class ByResource(LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return group.get(path, path)

    return ByResource(config, log)
