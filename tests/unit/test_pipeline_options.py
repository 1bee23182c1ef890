"""The pipeline (services/pipeline.py) takes one frozen options object, whose ``Where`` says
where and how a job's checks run; planning takes the same ``Where``. Real catalog, real
SQLite store, the host executor."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest
from rich.console import Console

from orchestrator.catalog.core import Catalog
from orchestrator.commands.progress import RunViews
from orchestrator.errors import InputError
from orchestrator.services.pipeline import RunOptions, execute
from orchestrator.services.placing import Where
from orchestrator.services.run import plan_job, stage_job
from orchestrator.services.session import sessions
from orchestrator.spec import JobSpec, SuiteRef

ROOT = Path(__file__).resolve().parents[2]
CATALOG = Catalog.load(ROOT / "images")
SMOKE = SuiteRef(name="smoke", checks=("env.*",))


def test_the_options_are_frozen_and_default_to_this_machines_engine():
    where = Where()
    assert (where.executor, where.cpu_only, where.hosts_file) == ("docker", False, None)
    assert (where.pull, where.retries, where.repeat) == ("missing", 2, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        where.executor = "slurm"  # type: ignore[misc]


def test_an_unknown_executor_is_bad_input_naming_the_flag(tmp_path):
    job = JobSpec(name="j", images=("host",), suites=(SMOKE,))
    with pytest.raises(InputError, match="unknown --executor 'lsf'"):
        plan_job(job, CATALOG, sessions(str(tmp_path / "v.sqlite")), Where(executor="lsf"))


def test_the_host_executor_places_the_host_image_and_refuses_a_container_image(tmp_path):
    factory = sessions(str(tmp_path / "v.sqlite"))
    local = JobSpec(name="j", images=("host",), suites=(SMOKE,))
    where = Where(executor="host")
    placed = stage_job(plan_job(local, CATALOG, factory, where), where)
    ((pr),) = placed.planned
    assert pr.image.alias == "host" and placed.executor_for(pr).name == "host"
    assert placed.hosts and not placed.reap and not placed.staged
    alias = next(i.alias for i in CATALOG.images if i.executor != "host")
    container = JobSpec(name="j", images=(alias,), suites=(SMOKE,))
    with pytest.raises(InputError, match="--executor host runs only the image 'host'"):
        plan_job(container, CATALOG, factory, Where(executor="host"))


def test_the_pipeline_runs_a_given_job_where_and_as_often_as_where_says(tmp_path):
    factory = sessions(str(tmp_path / "v.sqlite"))
    job = JobSpec(name="j", images=("host",), suites=(SMOKE,))
    opts = RunOptions(job=job, where=Where(executor="host", pull="never", repeat=2))
    resumed, summaries = execute(opts, CATALOG, factory, RunViews(Console(file=io.StringIO())))
    assert [s.image for s in summaries] == ["host", "host"] and resumed is None
    assert len({s.run_id for s in summaries}) == 2
    assert all(s.counts["pass"] > 0 for s in summaries)
