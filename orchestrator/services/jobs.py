"""Job specs: the ones in a jobs/ directory, and the self-hosted runner label sets a job needs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..catalog.core import Catalog, load_job
from ..catalog.jobcheck import JobCheck, check_job
from ..errors import InputError
from ..regression import known_issues
from ..spec import JobSpec

ARCH = re.compile(r"^(gfx[0-9a-f]+|sm_[0-9]+)$")


def runner_sets(job: JobSpec, catalog: Catalog, cpu_only: bool = False) -> list[dict[str, Any]]:
    """Distinct runner label sets, each with the images that need it (pure).
    ``runs-on`` = [self-hosted, backend, archs..., other job labels...]."""
    archs = [lab for lab in job.labels if ARCH.match(lab)]
    others = [lab for lab in job.labels if not ARCH.match(lab)]
    sets: dict[tuple[str, ...], list[str]] = {}
    for image in catalog.select(job.images):
        backend = "cpu" if cpu_only or image.executor == "host" else image.backend
        wanted = [
            a
            for a in (*getattr(image, "archs", ()), *archs)
            if backend != "cpu" and a.startswith("gfx" if backend == "rocm" else "sm_")
        ]
        labels = tuple(dict.fromkeys(("self-hosted", backend, *wanted, *others)))
        sets.setdefault(labels, []).append(image.alias)
    return [{"runs-on": list(labels), "images": images} for labels, images in sets.items()]


def job_specs(directory: Path) -> list[dict[str, Any]]:
    """Every job spec in a directory with its images, suites and labels."""
    rows = []
    for path in sorted(directory.glob("*.yaml")):
        try:
            job = load_job(path)
        except Exception:  # noqa: BLE001 - a file that is not a job spec (known-issues.yaml) is not listed
            continue
        rows.append(
            {
                "name": job.name,
                "path": str(path),
                "description": job.description,
                "images": list(job.images),
                "suites": [s.name for s in job.suites],
                "labels": list(job.labels),
            }
        )
    return rows


@dataclass(frozen=True)
class KnownIssuesCheck:
    """A known-issues file among the job specs (jobs/known-issues.yaml, which `jobs validate
    jobs/*.yaml` meets): checked as what it is, its entries counted."""

    entries: int


def _known_issues_file(path: Path) -> bool:
    """A mapping whose one key is ``issues``: the known-issues file's shape, no job spec's."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False  # check_job says what is wrong with it
    return isinstance(data, dict) and set(data) == {"issues"}


def validate_files(
    paths: list[Path], catalog: Catalog
) -> list[JobCheck | KnownIssuesCheck | InputError]:
    """Each job spec checked whole (every mistake of each file, ``jobcheck``), a known-issues
    file as one; a file that cannot be read or is not YAML is its error, and the others are
    checked all the same."""
    out: list[JobCheck | KnownIssuesCheck | InputError] = []
    for path in paths:
        try:
            if _known_issues_file(path):
                out.append(KnownIssuesCheck(len(known_issues.load(path).entries)))
            else:
                out.append(check_job(path, catalog))
        except InputError as exc:
            out.append(exc)
    return out


def validation_json(
    path: Path, checked: JobCheck | KnownIssuesCheck | InputError
) -> dict[str, Any]:
    """One file's validation as ``jobs validate --json`` prints it (keys sorted)."""
    out = {"file": str(path), "valid": True, "job": None, "problems": []}
    if isinstance(checked, KnownIssuesCheck):
        return {**out, "known_issues": checked.entries}
    if isinstance(checked, InputError):
        problems = [{"line": None, "key": None, "message": checked.message, "hint": checked.hint}]
        return {**out, "valid": False, "problems": problems}
    return {
        **out,
        "valid": checked.ok,
        "job": checked.job.name if checked.job else None,
        "problems": [
            {"line": p.line, "key": p.key, "message": p.message, "hint": p.hint}
            for p in checked.problems
        ],
    }
