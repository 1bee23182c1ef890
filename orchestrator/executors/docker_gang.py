"""A multi-node task on Docker hosts: one container per node, each on its host's engine,
with host networking for the collective (as multi-node launchers do: the ranks reach
each other at the hosts' addresses) and the rendezvous variables of its rank. Node 0's
address and a port checked free there are the rendezvous.

The containers start together and end together: when one node's probe dies (exit code
not 0, or gone) the others get ``GRACE_S`` to finish, then every container is removed;
when all but one have ended, the last gets the same grace before it counts as hung. At
the task's deadline every container is killed. Every container is always removed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import docker.errors
from requests.exceptions import ConnectionError as RequestsConnectionError

from ..spec import Execution, Task
from . import gang
from .base import overall_timeout, workload_archives
from .container import ContainerRun
from .transcript import Transcript, conclude, infrastructure_failure


class Node:
    """One node's container: its engine (its host's ``docker.DockerExecutor``), transcript
    and how it ended."""

    def __init__(self, rank: int, task: Task, executor: Any) -> None:
        self.rank, self.task, self.executor = rank, task, executor
        self.transcript = Transcript()
        self.ran: ContainerRun | None = None
        self.error: str | None = None
        self.digest: str | None = None
        self.image_id: str | None = None
        self.ended = threading.Event()
        self.stopped_by_us = False

    @property
    def failed(self) -> bool:
        return self.error is not None or (
            self.ran is not None and self.ran.exit_code != 0 and not self.stopped_by_us
        )


def node_task(task: Task, rank: int) -> Task:
    """The task as node ``rank`` runs it: its host and its GPUs."""
    host = task.nodes[rank]
    gpus = task.node_gpus[rank] if task.node_gpus and rank < len(task.node_gpus) else None
    return task.model_copy(update={"host": host, "gpus": gpus or None})


def execute_gang(
    task: Task,
    run_id: str,
    executors: list[Any],
    on_result: Callable[[Any], None] | None,
    on_started: Callable[[], None] | None,
    node_options: Callable[..., tuple[dict[str, Any], Any]],
    run_container: Callable[..., Any],
    grace: float = gang.GRACE_S,
) -> Execution:
    """Run ``task`` on its nodes (``executors[r]`` is node r's DockerExecutor); the docker
    module, which imports this one, hands in how it sizes and runs a container."""
    from .pull import runnable

    t0 = time.perf_counter()
    reference = runnable(task.image)
    nodes = [Node(r, node_task(task, r), ex) for r, ex in enumerate(executors)]
    for n in nodes:
        n.digest, n.image_id, problem = n.executor.image_names(reference)
        if problem:
            return infrastructure_failure(
                task, f"node {n.task.host.name} (rank {n.rank}): {problem}"
            )
    try:
        port = gang.choose_port(task.nodes[0].net_address)
    except Exception as exc:  # noqa: BLE001 - an InfrastructureError: every check is error
        return infrastructure_failure(task, str(exc))
    nodes[0].transcript.on_result = on_result
    archives = workload_archives(task)
    deadline = overall_timeout(task)
    started = threading.Barrier(len(nodes), action=on_started) if on_started else None

    def one(n: Node) -> None:
        try:
            opts, _limits = node_options(n.executor, n.task, run_id)
            opts["network_mode"] = "host"  # the ranks meet at the hosts' addresses
            opts["environment"] = {
                **opts.get("environment", {}),
                **gang.rank_env(task, n.rank, port, n.digest, n.image_id),
            }
            opts["labels"] = {**opts.get("labels", {}), "org.valorch.node_rank": str(n.rank)}
            n.ran = run_container(
                n.executor.client,
                reference,
                opts,
                archives,
                deadline,
                n.transcript.feed,
                n.executor._flight,
                lambda: _arrive(started),
            )
        except (docker.errors.DockerException, RequestsConnectionError) as exc:
            if not n.stopped_by_us:  # removed by us: not the node's fault
                n.error = f"engine error on {n.task.host.name}: {str(exc)[:300]}"
            _arrive(started, broken=True)
        except Exception as exc:  # noqa: BLE001 - a harness failure on one node is that node's fault
            n.error = f"{type(exc).__name__}: {str(exc)[:300]}"
            _arrive(started, broken=True)
        finally:
            n.ended.set()

    threads = [
        threading.Thread(target=one, args=(n,), name=f"valorch-node{n.rank}", daemon=True)
        for n in nodes
    ]
    for t in threads:
        t.start()
    hung = _watch(nodes, grace)
    for t in threads:
        t.join()
    at_deadline = [
        (n.rank, len(n.transcript.results)) for n in nodes if n.ran is not None and n.ran.killed
    ]
    # of those killed at the deadline: the ones the others waited for
    hung |= gang.hung_nodes(at_deadline)
    for n in nodes:
        n.transcript.close()
    runs = [_node_run(n, hung) for n in nodes]
    execution = gang.merge(task, runs)
    timings = {
        **execution.timings,
        "total_s": time.perf_counter() - t0,
        **nodes[0].transcript.breakdown(),
    }
    return execution.model_copy(update={"timings": timings})


def _arrive(barrier: threading.Barrier | None, broken: bool = False) -> None:
    """Every node's container started (``on_started`` once), or one never will."""
    if barrier is None:
        return
    try:
        if broken:
            barrier.abort()
        else:
            barrier.wait(timeout=120)
    except threading.BrokenBarrierError:
        pass


def _watch(nodes: list[Node], grace: float) -> set[int]:
    """Wait for the nodes; a node that failed, or the last one still running once all others ended,
    starts the grace; after it, the ones still running are removed. The ranks removed as hung."""
    hung: set[int] = set()
    since: float | None = None
    while not all(n.ended.is_set() for n in nodes):
        time.sleep(0.2)
        running = [n for n in nodes if not n.ended.is_set()]
        if since is None and (
            any(n.failed for n in nodes if n.ended.is_set())
            or (len(nodes) > 1 and len(running) == 1)
        ):
            since = time.monotonic()
        if since is not None and time.monotonic() - since > grace:
            if not any(n.failed for n in nodes if n.ended.is_set()):
                # the others ended well: these stopped answering
                hung.update(n.rank for n in running)
            for n in running:
                n.stopped_by_us = True
                n.executor.cancel()
            for n in running:
                n.ended.wait(60)
    return hung


def _node_run(n: Node, hung: set[int]) -> gang.NodeRun:
    host = n.task.host
    fault: str | None = None
    why = ""
    if n.ran is None:  # never ran (engine error) or removed before it ended
        why = n.error or "its container was removed"
        if n.error:
            fault, execution = "died", infrastructure_failure(n.task, why)
        else:
            fault = "hung" if n.rank in hung else None
            stopped = f"node {host.name} was stopped: {why}"
            execution = conclude(n.transcript, n.task, exit_code=None, killed=stopped)
    else:
        killed = "the task passed its deadline and was killed" if n.ran.killed else None
        if n.stopped_by_us and not killed:
            killed = "stopped: another node of the task had ended"
        execution = conclude(
            n.transcript, n.task, exit_code=n.ran.exit_code, killed=killed, log=n.ran.stderr_tail
        ).model_copy(update={"timings": n.ran.timings})
        if n.rank in hung:
            fault, why = (
                "hung",
                (
                    "killed at the task's deadline, behind the other nodes"
                    if n.ran.killed
                    else f"still running {gang.GRACE_S:g}s after the other nodes had ended"
                ),
            )
        elif n.ran.exit_code != 0 and not n.stopped_by_us:
            fault, why = "died", f"its container exited with code {n.ran.exit_code}"
    gpus = tuple(g.index for g in (n.task.gpus or ()))
    return gang.NodeRun(n.rank, host, execution, fault, why, n.digest, gpus)
