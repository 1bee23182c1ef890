"""Loading the checks: a suite's modules, every module, a job's declared checks.

The check modules import ``registry`` to register; this module imports them (through the
``checks`` package), so that the registry never imports a check module and the probe's
modules form no import circle. A run imports only its suite's modules (``load_suite``):
the probe ships without bytecode, so every module imported is compiled in the container
(docs/benchmarks.md, "The smoke run against its floor: the run's own timeline").

Declared checks (``--declare JSON``): command checks for suite ``command``, a pytest
workload for suite ``pytest``. ``build`` makes Check objects without registering them;
``declare`` registers them inside the probe."""

from __future__ import annotations

import fnmatch
import sys
from dataclasses import asdict
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import registry
from .registry import CHECK_MODULES, CHECKS, DECLARED, SUITE_MODULES, SUITES, Check, Suite


def load_suite(suite_name: str) -> None:
    """Register the checks of ``suite_name`` (the probe's run of one suite): only its modules
    when the check package is not imported yet and the suite is built in, else every module.
    The suite's checks register in the same order either way (each module registers in
    one suite only, and a suite's modules load in ``CHECK_MODULES`` order)."""
    wanted = SUITE_MODULES.get(suite_name)
    if wanted is not None and __name__.rpartition(".")[0] + ".checks" not in sys.modules:
        registry._first_import = tuple(m for m in CHECK_MODULES if m in wanted)
    try:
        from . import checks  # noqa: F401 (importing the package registers the checks)
    finally:
        registry._first_import = None


def build(suite_name: str, declaration: Dict[str, Any]) -> List[Check]:
    if not isinstance(declaration, dict):
        raise ValueError("a declaration is a JSON object")
    shape = DECLARED.get(suite_name)
    if shape is None:
        if declaration:
            raise ValueError(
                "suite %s takes no declared checks (only %s do)" % (suite_name, ", ".join(DECLARED))
            )
        return []
    key = shape["takes"]
    unknown = sorted(set(declaration) - {key})
    if unknown:
        raise ValueError(
            "suite %s declares only %r, not %s" % (suite_name, key, ", ".join(unknown))
        )
    if suite_name == "command":
        from .checks.command import command_check

        return [command_check(spec) for spec in declaration.get("commands") or ()]
    from .checks.pytest_workload import pytest_check

    return [pytest_check(declaration["pytest"])] if declaration.get("pytest") else []


def declare(suite_name: str, declaration: Optional[dict]) -> List[Check]:
    """Register the checks a job declares for a suite (command checks, a pytest
    workload) in this process, so that they run, crash and time out exactly as
    static checks do. Raises ValueError for a declaration the suite cannot take."""
    from . import checks  # noqa: F401 (importing the package registers every check)

    if suite_name not in SUITES:
        raise KeyError(suite_name)
    made = build(suite_name, declaration or {})
    for chk in made:
        if chk.id in CHECKS:
            raise ValueError("declared check %s is already registered" % chk.id)
    for chk in made:
        CHECKS[chk.id] = chk
        SUITES[suite_name].checks.append(chk.id)
    return made


def select(suite_name: str, patterns: Sequence[str] = ()) -> Tuple[Suite, List[Check]]:
    from . import checks  # noqa: F401 (importing the package registers every check)

    if suite_name not in SUITES:
        raise KeyError(suite_name)
    s = SUITES[suite_name]
    chosen = [
        CHECKS[c]
        for c in s.checks
        if not patterns or any(fnmatch.fnmatchcase(c, p) for p in patterns)
    ]
    return s, chosen


def catalog() -> dict:
    from . import checks  # noqa: F401 (importing the package registers every check)

    return {
        "suites": [asdict(s) for s in SUITES.values()],
        "checks": [dict(c.info(), limits=c.limits) for c in CHECKS.values()],
    }
