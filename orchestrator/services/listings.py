"""The rows of ``images list`` and ``jobs list``: what validating the catalog and the job
specs gives, kept by ``listing_cache`` so that listing unchanged files again imports no
pydantic (docs/architecture.md, "Listings from a validated cache")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import listing_cache


def image_rows(directory: Path) -> list[dict[str, Any]]:
    """Every image of the catalog in ``directory`` (the built-in ``host`` first), each as
    ``images list --json`` prints it."""
    return listing_cache.rows("images", directory, _validated_images)


def job_rows(directory: Path) -> list[dict[str, Any]]:
    """Every job spec in ``directory`` with its images, suites and labels."""
    return listing_cache.rows("jobs", directory, _validated_jobs)


def _validated_images(directory: Path) -> list[dict[str, Any]]:
    from ..catalog.core import Catalog

    return [i.model_dump(mode="json") for i in Catalog.load(directory).images]


def _validated_jobs(directory: Path) -> list[dict[str, Any]]:
    from .jobs import job_specs

    return job_specs(directory)
