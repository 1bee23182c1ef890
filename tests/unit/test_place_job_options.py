"""place_job takes a job and two frozen option objects (services/run.py): ``Where`` a job
runs and how its hosts are readied (``Staging``). Real catalog, real SQLite store."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from orchestrator.catalog.core import Catalog
from orchestrator.errors import InputError
from orchestrator.services.run import Staging, Where, execute_job, place_job
from orchestrator.services.session import sessions
from orchestrator.spec import JobSpec, SuiteRef

ROOT = Path(__file__).resolve().parents[2]
CATALOG = Catalog.load(ROOT / "images")
SMOKE = SuiteRef(name="smoke", checks=("env.*",))


def test_the_options_are_frozen_and_default_to_this_machines_engine():
    where = Where()
    assert (where.executor, where.cpu_only, where.hosts_file) == ("docker", False, None)
    assert Staging().pull == "missing"
    with pytest.raises(dataclasses.FrozenInstanceError):
        where.executor = "slurm"  # type: ignore[misc]


def test_an_unknown_executor_is_bad_input_naming_the_flag(tmp_path):
    job = JobSpec(name="j", images=("host",), suites=(SMOKE,))
    with pytest.raises(InputError, match="unknown --executor 'lsf'"):
        place_job(job, CATALOG, sessions(str(tmp_path / "v.sqlite")), Where(executor="lsf"))


def test_the_host_executor_places_the_host_image_and_refuses_a_container_image(tmp_path):
    factory = sessions(str(tmp_path / "v.sqlite"))
    local = JobSpec(name="j", images=("host",), suites=(SMOKE,))
    placed = place_job(local, CATALOG, factory, Where(executor="host"))
    ((pr),) = placed.planned
    assert pr.image.alias == "host" and placed.executor_for(pr).name == "host"
    assert placed.hosts and not placed.reap and not placed.staged
    alias = next(i.alias for i in CATALOG.images if i.executor != "host")
    container = JobSpec(name="j", images=(alias,), suites=(SMOKE,))
    with pytest.raises(InputError, match="--executor host runs only the image 'host'"):
        place_job(container, CATALOG, factory, Where(executor="host"))


def test_execute_job_splits_the_flags_it_is_given_into_the_two_objects(tmp_path):
    factory = sessions(str(tmp_path / "v.sqlite"))
    job = JobSpec(name="j", images=("host",), suites=(SMOKE,))
    (summary,) = execute_job(job, CATALOG, factory, executor="host", pull="never")
    assert summary.image == "host" and summary.counts["pass"] > 0
