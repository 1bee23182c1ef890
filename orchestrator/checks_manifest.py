"""What the host knows of the probe: its manifest, ``valorch_probe/checks.json``, read as data.

The probe's registry lives in its check modules, which run inside images; the orchestrator
learns the suites and checks from the manifest generated from that registry
(``scripts/gen-checks-manifest.py``; a unit test keeps it current) and never imports a
probe module (pyproject's import contract "The host never imports the probe"): the
manifest is the only bridge. It also carries how a job's declared checks (suites
``command`` and ``pytest``) describe themselves, so that a plan expects exactly the checks
the probe builds (``declared``), the protocol's line marker, and the evidence table that
names a kernel's library (``library_of_kernel``).
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

#: the manifest, beside the probe's modules (both packages of one distribution)
PATH = Path(__file__).resolve().parent.parent / "valorch_probe" / "checks.json"


@dataclass(frozen=True)
class Manifest:
    suites: dict[str, dict[str, Any]]  # name -> {name, framework, description, checks}
    checks: dict[str, dict[str, Any]]  # id -> the check's entry, in registration order
    marker: str  # what starts each of the probe's protocol lines on its stdout
    shapes: dict[str, dict[str, Any]]  # declared suite -> how its checks describe themselves
    kernel_libraries: tuple[tuple[re.Pattern[str], str, str | None], ...]

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
        marker=data["marker"],
        shapes=data["declared"],
        kernel_libraries=tuple((re.compile(p), lib, v) for p, lib, v in data["kernel_libraries"]),
    )


def info(entry: dict[str, Any]) -> dict[str, Any]:
    """A check's entry reduced to ``spec.CheckInfo``'s fields (the manifest adds ``limits``,
    what a pass does not prove, and ``order``, its place in its suite's run)."""
    from .spec import CheckInfo

    return {k: entry[k] for k in CheckInfo.model_fields if k in entry}


def declared(
    suite: str, declaration: dict[str, Any], patterns: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """The checks a job declares for ``suite`` described as the probe builds them (its
    ``registry.declared_fields`` over the same table), filtered by glob patterns;
    ValueError for a declaration the suite cannot take."""
    shape = manifest().shapes.get(suite)
    if shape is None or set(declaration) - {shape["takes"]}:
        raise ValueError(f"suite {suite} cannot take the declaration {sorted(declaration)}")
    given = declaration.get(shape["takes"]) or []
    out = []
    for entry in given if isinstance(given, list) else [given]:
        values = {**shape["defaults"], **entry}
        fields = {k: v % values for k, v in shape["check"].items()}
        fields.update(
            feature=entry.get("feature") or fields["feature"],
            version=int(fields.get("version", 1)),
            suite=suite,
        )
        if not patterns or any(fnmatch.fnmatchcase(fields["id"], p) for p in patterns):
            out.append(
                {"library": None, "needs": [], "unit": None, "bigger_is_better": False, **fields}
            )
    return out


def library_of_kernel(name: str, vendor: str | None = None) -> str | None:
    """The library the probe's evidence table names for a GPU kernel's name (the first
    pattern of ``vendor``'s, or of any vendor, that matches), else None."""
    for rx, lib, who in manifest().kernel_libraries:
        if (who is None or vendor is None or who == vendor) and rx.search(name):
            return lib
    return None
