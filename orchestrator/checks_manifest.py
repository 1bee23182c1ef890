"""Which checks exist: the probe's manifest, ``valorch_probe/checks.json``, read as data.

The probe's registry lives in its check modules, which run inside images; the orchestrator
learns the suites and checks from the manifest generated from that registry
(``scripts/gen-checks-manifest.py``; a unit test keeps it current) and never imports a
probe module to learn them (pyproject's import contract: only the executors, which ship
the probe, import it). Checks a job declares (suites ``command`` and ``pytest``) are not
in the manifest: the executors describe those (``executors/probe_checks.py``).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

#: the manifest, beside the probe's modules (both packages of one distribution)
PATH = Path(__file__).resolve().parent.parent / "valorch_probe" / "checks.json"
#: the fields of a check that describe it to a run (spec.CheckInfo); the manifest adds
#: ``limits`` (what a pass does not prove) and ``order`` (its place in its suite's run)
INFO_FIELDS = (
    "id",
    "feature",
    "kind",
    "suite",
    "library",
    "version",
    "needs",
    "description",
    "unit",
    "bigger_is_better",
    "nodes",
)


@dataclass(frozen=True)
class Manifest:
    suites: dict[str, dict[str, Any]]  # name -> {name, framework, description, checks}
    checks: dict[str, dict[str, Any]]  # id -> the check's entry, in registration order

    def catalog(self) -> dict[str, Any]:
        """Every suite and every check, as ``valorch suites list --json`` prints them."""
        return {"suites": list(self.suites.values()), "checks": list(self.checks.values())}

    def select(self, suite: str, patterns: Sequence[str] = ()) -> list[dict[str, Any]]:
        """The checks of ``suite`` in run order, filtered by glob patterns (KeyError for a
        suite the probe does not have)."""
        return [
            self.checks[c]
            for c in self.suites[suite]["checks"]
            if not patterns or any(fnmatch.fnmatchcase(c, p) for p in patterns)
        ]

    def suite_of(self, check: str) -> str | None:
        """The built-in suite that runs ``check`` (None: not a built-in check)."""
        entry = self.checks.get(check)
        return entry["suite"] if entry is not None else None


@lru_cache(maxsize=1)
def manifest() -> Manifest:
    data = json.loads(PATH.read_text(encoding="utf-8"))
    return Manifest(
        suites={s["name"]: s for s in data["suites"]},
        checks={c["id"]: c for c in data["checks"]},
    )


def info(entry: dict[str, Any]) -> dict[str, Any]:
    """A check's entry reduced to what describes it to a run (``spec.CheckInfo``'s fields)."""
    return {k: entry[k] for k in INFO_FIELDS if k in entry}
