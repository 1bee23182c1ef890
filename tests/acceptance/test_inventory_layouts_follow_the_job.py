"""``matrix render --job JOB --layout components|libraries`` shows the images JOB ran, each
even where no inventory was taken, and no other (second look, bug 17: the libraries layout
showed only ``host``, which is not in the job, and components the whole catalog)."""

from __future__ import annotations

import json

import pytest
from root_helpers import ROOT, run_cli
from store_helpers import stored_run

from orchestrator.catalog.core import Catalog
from orchestrator.spec import CheckResult
from orchestrator.store.db import open_engine, session_factory

pytestmark = pytest.mark.cli

JOB = ("cpu_debian12_py3.11_pytorch_2.13", "cpu_debian12_py3.11_pytorch_1.13")


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("layouts") / "v.sqlite"
    images = Catalog.load(ROOT / "images").by_alias()
    factory = session_factory(open_engine(str(path)))
    with factory() as session:
        for alias in JOB:
            stored_run(
                session, images[alias], [CheckResult(check="smoke.a", status="pass")], job="cmp"
            )
        stored_run(
            session, images["host"], [CheckResult(check="smoke.a", status="pass")], job="other"
        )
        session.commit()
    return path


@pytest.mark.parametrize("layout", ["components", "libraries"])
def test_the_layout_shows_the_images_the_job_ran(db, layout):
    proc = run_cli(
        "matrix", "render", "--job", "cmp", "--layout", layout, "--format", "json", db=db
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    listed = [row["key"] for row in doc["rows"]] if layout == "components" else doc["columns"]
    assert "host" not in listed, listed
    # in the job's order (the order its images first ran), not the catalog's
    assert [x for x in listed if x in JOB] == list(JOB), listed
    if layout == "components":
        assert listed == list(JOB)


def test_a_job_that_never_ran_is_exit_2(db):
    proc = run_cli("matrix", "render", "--job", "nosuch", "--layout", "libraries", db=db)
    assert proc.returncode == 2 and "no stored run of that job" in proc.stderr, proc.stderr
