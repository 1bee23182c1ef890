"""The rows of ``images list`` and ``jobs list``: what validating the catalog and the job
specs gives, read from the files every time (a listing says what the files say now)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def image_rows(directory: Path) -> list[dict[str, Any]]:
    """Every image of the catalog in ``directory`` (the built-in ``host`` first), each as
    ``images list --json`` prints it."""
    from ..catalog.core import Catalog

    return [i.model_dump(mode="json") for i in Catalog.load(directory).images]


def job_rows(directory: Path) -> list[dict[str, Any]]:
    """Every job spec in ``directory`` with its images, suites and labels."""
    from .jobs import job_specs

    return job_specs(directory)
