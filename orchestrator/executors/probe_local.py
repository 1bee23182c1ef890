"""The probe's own code on this machine, outside a task: the executors ship the probe, and
they alone import it (pyproject's import contract); the rest of the orchestrator knows the
built-in checks from the manifest (``checks_manifest.py``).

- ``declared_infos``: the checks a job declares (suites ``command`` and ``pytest``), as the
  probe will build them from the declaration (their ids, features and descriptions), so that
  the plan expects exactly the checks the probe runs.
- ``raw_result_lines``: the probe run on this machine's interpreter from a private copy
  (``valorch hosts probe --record``), its protocol lines as printed.
- ``library_of_kernel``: the library the probe's evidence table names for a kernel name
  (a record turned into fixtures, hosts/record_fixtures.py).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from valorch_probe import MARKER

from .. import proc
from .base import PROBE_PACKAGE


def declared_infos(
    suite: str, declaration: dict[str, Any], patterns: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """The declared checks' descriptions (as the probe's ``Check.info()``), filtered by glob
    patterns; ValueError for a declaration the suite cannot take."""
    from valorch_probe.declared import infos

    return infos(suite, declaration, patterns)


def library_of_kernel(name: str, vendor: str) -> str | None:
    """The library ``valorch_probe/evidence.py``'s table names for a GPU kernel's name."""
    from valorch_probe.evidence import library_of_kernel as classify

    found: str | None = classify(name, vendor)
    return found


@dataclass(frozen=True)
class RawRun:
    lines: tuple[str, ...]  # each protocol line's JSON, the marker removed
    problems: tuple[str, ...]  # per suite that did not end well: why


def raw_result_lines(
    python: str, probe_dir: Path, env: dict[str, str], suites: Sequence[str]
) -> RawRun:
    """Run each suite with the probe at ``probe_dir`` on ``python`` (a private copy, the
    workloads as the invoking user) and keep its protocol lines."""
    lines: list[str] = []
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="valorch-record-") as tmp:
        shutil.copytree(
            probe_dir, Path(tmp) / PROBE_PACKAGE, ignore=shutil.ignore_patterns("__pycache__")
        )
        run_env = {k: v for k, v in env.items() if not k.startswith("PYTHON")}
        run_env.update(PYTHONPATH=tmp, PYTHONDONTWRITEBYTECODE="1")
        for suite in suites:
            argv = [python, "-m", PROBE_PACKAGE, "run", "--suite", suite, "--deadline", "300"]
            done = proc.call([*argv, "--workload-user", "self"], timeout=1800, env=run_env, cwd=tmp)
            if done.error or done.returncode != 0:
                problems.append(
                    f"suite {suite}: {done.error or 'exit %s' % done.returncode}: "
                    f"{done.stderr[-300:]}"
                )
            lines += [ln[len(MARKER) :] for ln in done.stdout.splitlines() if ln.startswith(MARKER)]
    return RawRun(tuple(lines), tuple(problems))
