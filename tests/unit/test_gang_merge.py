"""The merge of a multi-node task's per-node results, and its rendezvous (pure)."""

import socket

from orchestrator.executors.gang import NodeRun, choose_port, hung_nodes, merge, port_free, rank_env
from orchestrator.spec import CheckInfo, CheckResult, Execution, HostSpec, ImageSpec, SuiteRef, Task
from valorch_probe.checks.multinode import busbw

A = HostSpec(name="a", address="10.0.0.1")
B = HostSpec(name="b", address="10.0.0.2")
INFOS = tuple(
    CheckInfo(id=f"multinode.{c}", feature=c, kind="kernel", nodes=2)
    for c in ("all_reduce", "broadcast")
)
TASK = Task(
    image=ImageSpec(alias="img", reference="img:1", backend="cpu"),
    suite=SuiteRef(name="multinode", nodes=2),
    host=A,
    checks=INFOS,
    nodes=(A, B),
)


def ex(*statuses, msg="ok"):
    return Execution(
        results=tuple(
            CheckResult(check=i.id, status=s, message=msg, feature=f"{i.feature} across nodes")
            for i, s in zip(INFOS, statuses, strict=False)
        ),
        exit_code=0,
    )


def test_all_pass_is_rank_zeros_results_and_every_node_in_the_meta():
    out = merge(
        TASK,
        [
            NodeRun(1, B, ex("pass", "pass"), digest="sha256:b"),
            NodeRun(0, A, ex("pass", "pass"), digest="sha256:a"),
        ],
    )
    assert [r.status for r in out.results] == ["pass", "pass"]
    assert [r.check for r in out.results] == [
        "multinode.all_reduce[2-nodes]",
        "multinode.broadcast[2-nodes]",
    ]
    assert (
        out.results[0].feature == "all_reduce across 2 nodes"
        and out.results[0].metrics["nodes"] == 2
    )
    assert [(n["rank"], n["host"], n["address"], n["digest"]) for n in out.meta["nodes"]] == [
        (0, "a", "10.0.0.1", "sha256:a"),
        (1, "b", "10.0.0.2", "sha256:b"),
    ]
    assert out.image_digest == "sha256:a"


def test_a_node_that_died_turns_what_did_not_pass_into_error_naming_it():
    died = NodeRun(
        1, B, ex("pass", "crash"), fault="died", why="its container exited with code 137"
    )
    out = merge(TASK, [NodeRun(0, A, ex("pass", "fail", msg="Connection closed by peer")), died])
    assert [r.status for r in out.results] == ["pass", "error"]
    assert out.results[1].message.startswith(
        "node b (rank 1) died mid-task: its container exited with code 137"
    )
    assert "Connection closed by peer" in out.results[1].message


def test_a_hung_node_is_timeout_naming_it():
    out = merge(
        TASK,
        [
            NodeRun(0, A, ex("fail", "fail")),
            NodeRun(1, B, ex("timeout", "timeout"), fault="hung", why="still running"),
        ],
    )
    assert {r.status for r in out.results} == {"timeout"}
    assert all("node b (rank 1) hung" in r.message for r in out.results)


def test_without_a_fault_the_worst_node_status_wins_and_is_named():
    out = merge(
        TASK,
        [NodeRun(0, A, ex("pass", "pass")), NodeRun(1, B, ex("pass", "fail", msg="wrong values"))],
    )
    assert [r.status for r in out.results] == ["pass", "fail"]
    assert out.results[1].message == "node b (rank 1): fail: wrong values"


def test_hung_nodes_are_the_ones_that_reported_least():
    assert hung_nodes([(0, 5), (1, 2), (2, 2)]) == {1, 2}
    assert hung_nodes([]) == set()


def test_rank_env_has_the_standard_rendezvous_variables():
    env = rank_env(TASK, 1, 29555, "sha256:x")
    assert {
        k: env[k]
        for k in ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK", "NODE_RANK")
    } == {
        "MASTER_ADDR": "10.0.0.1",
        "MASTER_PORT": "29555",
        "WORLD_SIZE": "2",
        "RANK": "1",
        "LOCAL_RANK": "0",
        "NODE_RANK": "1",
    }
    assert env["VALORCH_NODE"] == "b" and env["VALORCH_IMAGE_DIGEST"] == "sha256:x"


def test_a_port_in_use_is_not_chosen():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        taken = s.getsockname()[1]
        assert not port_free("127.0.0.1", taken)
    port = choose_port("127.0.0.1")
    assert 29500 <= port <= 29999 and port_free("127.0.0.1", port)


def test_busbw_is_nccl_tests_definition():
    # 1 GB in 1 s across 8 ranks: algbw 1 GB/s; busbw 2*7/8, 7/8, 1
    assert busbw("all_reduce", 1e9, 1.0, 8) == (1.0, 1.75)
    assert busbw("all_gather", 1e9, 1.0, 8) == (1.0, 0.875)
    assert busbw("reduce_scatter", 1e9, 1.0, 8) == (1.0, 0.875)
    assert busbw("broadcast", 1e9, 2.0, 8) == (0.5, 0.5)
