"""Job specs: the ones in a jobs/ directory, and the self-hosted runner label sets a job needs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..catalog.core import Catalog, load_job
from ..catalog.jobcheck import JobCheck, check_job
from ..errors import InputError
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


def validate_files(paths: list[Path], catalog: Catalog) -> list[JobCheck | InputError]:
    """Each job spec checked whole (every mistake of each file, ``jobcheck``); a file that
    cannot be read or is not YAML is its error, and the others are checked all the same."""
    out: list[JobCheck | InputError] = []
    for path in paths:
        try:
            out.append(check_job(path, catalog))
        except InputError as exc:
            out.append(exc)
    return out


def validation_json(path: Path, checked: JobCheck | InputError) -> dict[str, Any]:
    """One file's validation as ``jobs validate --json`` prints it."""
    if isinstance(checked, InputError):
        problems = [{"line": None, "key": None, "message": checked.message, "hint": checked.hint}]
        return {"file": str(path), "valid": False, "job": None, "problems": problems}
    return {
        "file": str(path),
        "valid": checked.ok,
        "job": checked.job.name if checked.job else None,
        "problems": [
            {"line": p.line, "key": p.key, "message": p.message, "hint": p.hint}
            for p in checked.problems
        ],
    }
