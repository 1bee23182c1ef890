"""The job ``valorch run`` selects from its flags (catalog/adhoc.py): pure, no CLI."""

from pathlib import Path

import pytest

from orchestrator.catalog.adhoc import Selection, job_for
from orchestrator.catalog.core import Catalog
from orchestrator.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
CAT = Catalog.load(ROOT / "images")


def test_images_without_suites_run_smoke_with_the_flags_on_every_suite():
    spec = job_for(CAT, Selection(images=("host",), deadline=30.0, attempts=2))
    assert spec.name == "adhoc" and spec.images == ("host",)
    assert [(s.name, s.deadline, s.attempts) for s in spec.suites] == [("smoke", 30.0, 2)]


@pytest.mark.parametrize(
    ("sel", "said"),
    [
        (Selection(), "nothing to run"),
        (Selection(job=Path("j.yaml"), images=("host",)), "--job and --image are exclusive"),
        (Selection(job=Path("j.yaml"), suites=("smoke",)), "--suite/--check apply to --image"),
        (Selection(images=("host",), profiling_caps=True), "--profiling-caps applies"),
        (Selection(images=("host",), suites=("nosuchsuite",)), "nosuchsuite"),
    ],
)
def test_a_selection_that_cannot_run_is_bad_input(sel, said):
    with pytest.raises(InputError) as exc:
        job_for(CAT, sel)
    assert said in exc.value.message and exc.value.exit_code == 2


def test_profiling_caps_mark_only_the_profiler_suite():
    spec = job_for(
        CAT, Selection(images=("host",), suites=("smoke", "profiler"), profiling_caps=True)
    )
    assert {s.name: s.profiling_caps for s in spec.suites} == {"smoke": False, "profiler": True}
