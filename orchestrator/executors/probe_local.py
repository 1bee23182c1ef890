"""The probe run on this machine's interpreter from a private copy, outside a task
(``valorch hosts probe --record``): ``raw_result_lines`` keeps its protocol lines as printed.
The probe runs as a separate process from the copied files; the host imports none of its
modules (pyproject's import contract) and knows its line marker from the manifest.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import proc
from ..checks_manifest import manifest
from .base import PROBE_PACKAGE


@dataclass(frozen=True)
class RawRun:
    lines: tuple[str, ...]  # each protocol line's JSON, the marker removed
    problems: tuple[str, ...]  # per suite that did not end well: why


def raw_result_lines(
    python: str, probe_dir: Path, env: dict[str, str], suites: Sequence[str]
) -> RawRun:
    """Run each suite with the probe at ``probe_dir`` on ``python`` (a private copy, the
    workloads as the invoking user) and keep its protocol lines."""
    marker = manifest().marker
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
            lines += [ln[len(marker) :] for ln in done.stdout.splitlines() if ln.startswith(marker)]
    return RawRun(tuple(lines), tuple(problems))
