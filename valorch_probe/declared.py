"""Checks declared at run time by a job spec (``--declare JSON``): command
checks for suite ``command``, a pytest workload for suite ``pytest``.

``build`` makes Check objects without registering them (the registry's
``declare`` does that inside the probe); ``infos`` describes them for the
orchestrator, which must know the expected checks before the run."""

from __future__ import annotations

import fnmatch
from typing import Any, Dict, List, Sequence

from .registry import Check

TAKES = {"command": "commands", "pytest": "pytest"}


def build(suite_name: str, declaration: Dict[str, Any]) -> List[Check]:
    if not isinstance(declaration, dict):
        raise ValueError("a declaration is a JSON object")
    key = TAKES.get(suite_name)
    if key is None:
        if declaration:
            raise ValueError(
                "suite %s takes no declared checks (only %s do)" % (suite_name, ", ".join(TAKES))
            )
        return []
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


def infos(
    suite_name: str, declaration: Dict[str, Any], patterns: Sequence[str] = ()
) -> List[Dict[str, Any]]:
    """The declared checks' descriptions (as Check.info()), filtered by glob patterns."""
    return [
        c.info()
        for c in build(suite_name, declaration)
        if not patterns or any(fnmatch.fnmatchcase(c.id, p) for p in patterns)
    ]
