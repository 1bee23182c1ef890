"""The live progress table shows a multi-node task on every node's host, not only on rank
0's: each host counts it once, and "running now" names the node it is there."""

import io

from rich.console import Console

from orchestrator.commands.progress import LiveReporter
from orchestrator.spec import CheckInfo, CheckResult, Execution, HostSpec, ImageSpec, SuiteRef, Task

A = HostSpec(name="node-a", address="10.0.0.1")
B = HostSpec(name="node-b", address="10.0.0.2")
TASK = Task(
    image=ImageSpec(alias="img", reference="img:1", backend="cpu"),
    suite=SuiteRef(name="multinode", nodes=2),
    host=A,
    checks=(CheckInfo(id="multinode.all_reduce", feature="all_reduce", kind="kernel", nodes=2),),
    nodes=(A, B),
)


def _rows(reporter):
    sink = io.StringIO()
    Console(file=sink, width=200).print(reporter.table())
    return {
        cells[0]: cells[1:]
        for line in sink.getvalue().splitlines()
        if (cells := [c.strip() for c in line.strip("│").split("│")])[0] in ("node-a", "node-b")
    }


def test_two_node_task_counts_on_both_hosts_through_its_life():
    reporter = LiveReporter(Console(file=io.StringIO()), disable=True)
    reporter.task_queued(TASK, 30.0)
    rows = _rows(reporter)
    assert set(rows) == {"node-a", "node-b"}
    assert all(r[:4] == ["1", "0", "0", "0"] for r in rows.values())
    assert reporter.eta() == 30.0

    reporter.task_started(TASK)
    rows = _rows(reporter)
    assert rows["node-a"][1] == "1" and rows["node-b"][1] == "1"
    assert "node 0 of 2" in rows["node-a"][4] and "node 1 of 2" in rows["node-b"][4]

    result = CheckResult(check="multinode.all_reduce", status="pass", message="ok")
    reporter.result(TASK, result)
    reporter.task_finished(TASK, Execution(results=(result,), exit_code=0))
    rows = _rows(reporter)
    assert rows["node-a"][:4] == ["0", "0", "1", "0"] == rows["node-b"][:4]


def test_one_node_task_stays_on_its_host_alone():
    single = TASK.model_copy(update={"nodes": ()})
    reporter = LiveReporter(Console(file=io.StringIO()), disable=True)
    reporter.task_queued(single, 10.0)
    reporter.task_started(single)
    rows = _rows(reporter)
    assert set(rows) == {"node-a"}
    assert "node 0" not in rows["node-a"][4]
