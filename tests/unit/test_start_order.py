"""The order a batch's tasks wait for slots in (``scheduling/flight.start_order``): runs with
the most expected work first, and each run's suites in the job's order, however long each is
expected to take (a job's ``suites: [smoke, kernels, features]`` runs smoke first)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.scheduling.flight import Item, start_order
from orchestrator.spec import HostSpec, ImageSpec, SuiteRef, Task

HOST = HostSpec(name="h")


def item(run: str, suite: str, expected: float) -> Item:
    image = ImageSpec(alias=run, reference=f"{run}:1", backend="cpu")
    return Item(
        Task(image=image, suite=SuiteRef(name=suite), host=HOST, checks=()), run, None, expected
    )


def test_a_runs_suites_start_in_the_jobs_order_and_the_longest_run_first():
    items = [
        item("a", "smoke", 5.0),
        item("a", "kernels", 20.0),
        item("a", "features", 60.0),
        item("b", "smoke", 100.0),
    ]
    got = [(it.run_id, it.task.suite.name) for it in start_order(items)]
    assert got == [("b", "smoke"), ("a", "smoke"), ("a", "kernels"), ("a", "features")]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("abc"), st.floats(0.1, 1000, allow_nan=False)),
        min_size=1,
        max_size=12,
    )
)
def test_the_order_keeps_each_runs_job_order_and_sorts_runs_by_work(drawn):
    items = [item(run, f"s{i}", expected) for i, (run, expected) in enumerate(drawn)]
    got = start_order(items)
    assert sorted(map(id, got)) == sorted(map(id, items))
    for run in "abc":
        mine = [it.task.suite.name for it in got if it.run_id == run]
        assert mine == [it.task.suite.name for it in items if it.run_id == run]
    work = {r: sum(e for rr, e in drawn if rr == r) for r, _ in drawn}
    firsts = list(dict.fromkeys(it.run_id for it in got))
    assert [work[r] for r in firsts] == sorted((work[r] for r in firsts), reverse=True)
    # a run's tasks are contiguous: one run's suites go out before the next run's
    assert len(firsts) == len({it.run_id for it in got})
    runs = [it.run_id for it in got]
    assert all(
        runs.index(r) + runs.count(r) - 1 == len(runs) - 1 - runs[::-1].index(r) for r in firsts
    )
