"""Every job shipped in jobs/ (the ones examples/ run) loads with the image catalog, its
images resolved, and no field of it is refused as having no effect: the checks of what a
job writes never refuse a valid shipped job."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.catalog.core import Catalog, load_job

ROOT = Path(__file__).resolve().parents[2]
JOBS = sorted(p for p in (ROOT / "jobs").glob("*.yaml") if p.name != "known-issues.yaml")


def test_there_are_shipped_jobs():
    assert len(JOBS) >= 5


@pytest.mark.parametrize("path", JOBS, ids=[p.name for p in JOBS])
def test_each_shipped_job_loads_and_resolves(path):
    catalog = Catalog.load(ROOT / "images")
    job = load_job(path, catalog)
    assert catalog.select(list(job.images))
    assert job.suites


def test_the_examples_name_only_shipped_jobs():
    named = set()
    for path in (ROOT / "examples").rglob("*"):
        if path.is_file():
            for word in path.read_text(errors="replace").split():
                if word.startswith("jobs/") and word.endswith(".yaml"):
                    named.add(word)
    assert named, "the examples run jobs/*.yaml"
    for name in named:
        assert (ROOT / name).is_file(), name
