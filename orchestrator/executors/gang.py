"""What every executor of a multi-node task shares: the rendezvous (address, a port
checked free, the standard variables per node) and the merge of the nodes' results
into one result per check (pure, apart from the port check).

A node's probe reports every check from its own rank's view; each multi-node check
already gathers every rank's verdict (rank 0's message names a wrong node). The merge
adds what only the orchestrator knows: a node that died (its container or step exited
without reporting) or hung (still running when the others were done, or at the
deadline). Then every check that did not pass on all nodes is ``error`` (a node died)
or ``timeout`` (a node hung), naming the node: a dead peer says nothing about the image.
"""

from __future__ import annotations

import errno
import random
import socket
from dataclasses import dataclass

from ..errors import InfrastructureError
from ..spec import CheckResult, Execution, HostSpec, Task

PORTS = (29500, 29999)  # the rendezvous port range (torchrun's default port is the first)
#: seconds a node may still run once another node ended with a fault, or all others ended
GRACE_S = 15.0
#: the worst status first: what a check's merged status is when nodes disagree
SEVERITY = (
    "crash",
    "timeout",
    "fail",
    "error",
    "partial",
    "unsupported",
    "skip",
    "n/a",
    "xfail",
    "pass",
)


def port_free(address: str, port: int, timeout: float = 1.0) -> bool:
    """Nothing listens on ``address:port``: on this machine a bind succeeds; elsewhere a
    connection is refused (an answer means it is taken; silence is not proof: not free)."""
    if address.startswith("127.") or address in ("localhost", "::1"):
        with socket.socket() as s:
            try:
                s.bind((address, port))
                return True
            except OSError:
                return False
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return False
    except OSError as exc:
        return exc.errno == errno.ECONNREFUSED or isinstance(exc, ConnectionRefusedError)


def choose_port(address: str, tries: int = 40) -> int:
    """A rendezvous port on node 0's address, checked free (InfrastructureError when none is)."""
    for _ in range(tries):
        port = random.randint(*PORTS)
        if port_free(address, port):
            return port
    raise InfrastructureError(
        f"no free rendezvous port in {PORTS[0]}-{PORTS[1]} on {address} after {tries} tries",
        "free a port in that range on the first node, or check that it answers at all",
    )


def collective_timeout(task: Task) -> float:
    """Seconds a collective waits for its peers before it raises: below the check's deadline,
    so that a hung peer ends as a result, not as a killed worker."""
    from .base import check_deadline

    return max(5.0, min(check_deadline(task) * 0.75, check_deadline(task) - 10.0))


def rank_env(
    task: Task, rank: int, port: int, digest: str | None = None, image_id: str | None = None
) -> dict[str, str]:
    """The standard rendezvous variables of node ``rank`` (one probe per node), and what the
    probe reports about its node (VALORCH_NODE, VALORCH_IMAGE_DIGEST, and VALORCH_IMAGE_ID,
    the image's content id, which the consistency check compares: a node that pulled an
    image names it by its manifest digest, one that loaded it by its id)."""
    nodes = task.nodes or (task.host,)
    return {
        "MASTER_ADDR": nodes[0].net_address,
        "MASTER_PORT": str(port),
        "WORLD_SIZE": str(len(nodes)),
        "RANK": str(rank),
        "LOCAL_RANK": "0",
        "NODE_RANK": str(rank),
        "VALORCH_NODE": nodes[rank].name,
        "VALORCH_IMAGE_DIGEST": digest or "",
        "VALORCH_IMAGE_ID": image_id or "",
        "VALORCH_COLLECTIVE_TIMEOUT": f"{collective_timeout(task):g}",
    }


@dataclass(frozen=True)
class NodeRun:
    """How one node's probe ended: its execution (``conclude``'s), and the fault the
    orchestrator saw there: ``died`` (exited before reporting, or never started),
    ``hung`` (still running when it had to be killed), or None."""

    rank: int
    host: HostSpec
    execution: Execution
    fault: str | None = None
    why: str = ""
    digest: str | None = None
    gpus: tuple[int, ...] = ()


def _last(execution: Execution) -> dict[str, CheckResult]:
    out: dict[str, CheckResult] = {}
    for r in execution.results:
        if r.check not in out or r.attempt >= out[r.check].attempt:
            out[r.check] = r
    return out


def merge(task: Task, nodes: list[NodeRun]) -> Execution:
    """One execution of a multi-node task: rank 0's results, each check's status the
    worst over the nodes, turned into ``error`` / ``timeout`` naming the node when a node
    died or hung; the meta lists every node (host, address, GPUs, image digest)."""
    nodes = sorted(nodes, key=lambda n: n.rank)
    first = nodes[0].execution
    faults = [n for n in nodes if n.fault]
    per = [(n, _last(n.execution)) for n in nodes]
    merged: list[CheckResult] = []
    last_of = _last(first)
    for r in first.results:
        if last_of.get(r.check) is not r:
            merged.append(r)  # an earlier attempt, as rank 0 saw it
            continue
        merged.append(_merge_one(r, per, faults))
    merged = [with_node_count(r, len(nodes)) for r in merged]
    meta = dict(first.meta)
    meta["nodes"] = [
        {
            "rank": n.rank,
            "host": n.host.name,
            "address": n.host.net_address,
            "gpus": list(n.gpus),
            "digest": n.digest,
            "exit_code": n.execution.exit_code,
            "fault": n.fault,
            "why": n.why[:300],
        }
        for n in nodes
    ]
    timings = dict(first.timings)
    for n in nodes[1:]:
        for k, v in n.execution.timings.items():
            timings[f"node{n.rank}.{k}"] = v
    infra = next(
        (
            f"node {n.host.name} (rank {n.rank}): {n.execution.infra_error}"
            for n in nodes
            if n.execution.infra_error
        ),
        None,
    )
    return Execution(
        results=tuple(merged),
        meta=meta,
        timings=timings,
        image_digest=nodes[0].digest or first.image_digest,
        exit_code=max((n.execution.exit_code or 0 for n in nodes), default=0),
        infra_error=infra,
    )


def node_row(check: str, nodes: int) -> str:
    """The id a check's result is stored under for a run on ``nodes`` nodes: its own matrix
    row per node count (``multinode.all_reduce[2-nodes]``), so that a 2-node and an 8-node
    figure are never compared as one."""
    return f"{check}[{nodes}-nodes]"


def with_node_count(r: CheckResult, nodes: int) -> CheckResult:
    feature = r.feature.replace("across nodes", f"across {nodes} nodes")
    if feature == r.feature:
        feature = f"{r.feature} ({nodes} nodes)".strip()
    return r.model_copy(
        update={
            "check": node_row(r.check, nodes),
            "feature": feature,
            "metrics": {**r.metrics, "nodes": nodes},
        }
    )


def _merge_one(
    r: CheckResult, per: list[tuple[NodeRun, dict[str, CheckResult]]], faults: list[NodeRun]
) -> CheckResult:
    seen = [(n, got.get(r.check)) for n, got in per]
    if all(x is not None and x.status == "pass" for _, x in seen):
        return r
    # rank 0 passed and each multi-node check gathers every rank's verdict before it passes:
    # a node that died after that only did not get to report it (its filler result is not news)
    if r.status == "pass" and all(x is None or x.status == "pass" or n.fault for n, x in seen):
        return r
    if faults:
        f = faults[0]
        status = "error" if f.fault == "died" else "timeout"
        what = "died" if f.fault == "died" else "hung"
        message = (
            f"node {f.host.name} (rank {f.rank}) {what} mid-task: {f.why}; rank 0 saw: {r.message}"
        )
        return r.model_copy(
            update={
                "status": status,
                "message": message[:4000],
                "metrics": {**r.metrics, "fault_node": f.host.name, "fault": f.fault},
            }
        )
    worst_node, worst = min(
        ((n, x) for n, x in seen if x is not None),
        key=lambda nx: SEVERITY.index(nx[1].status) if nx[1].status in SEVERITY else 0,
    )
    if worst_node.rank == 0 or worst.status == r.status:
        return r
    message = (
        f"node {worst_node.host.name} (rank {worst_node.rank}): {worst.status}: {worst.message}"
    )
    return r.model_copy(
        update={"status": worst.status, "message": message[:4000], "log": worst.log}
    )


def hung_nodes(nodes: list[tuple[int, int]]) -> set[int]:
    """Of (rank, results reported) for nodes killed at the deadline: the ranks that
    reported least (the ones the others were waiting for)."""
    if not nodes:
        return set()
    least = min(n for _, n in nodes)
    return {rank for rank, n in nodes if n == least}
