"""The transport NCCL chose, read from real NCCL_DEBUG=INFO logs (tests/fixtures/nccl/README.md
names each thread)."""

from pathlib import Path

from valorch_probe import nccl_log

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "nccl"


def test_two_nodes_over_sockets_with_shared_memory_inside_a_node():
    names = nccl_log.transports((FIX / "socket-two-nodes.log").read_text())
    assert names == ["NET/Socket", "SHM"]
    assert nccl_log.describe(names) == "TCP sockets, host shared memory (SHM)"


def test_peer_to_peer_inside_a_node_and_sockets_between_nodes():
    names = nccl_log.transports((FIX / "p2p-and-socket.log").read_text())
    assert names == ["P2P", "NET/Socket"]


def test_mpirun_prefixed_lines_and_channel_numbers_without_a_slash():
    assert nccl_log.transports((FIX / "socket-horovod.log").read_text()) == ["NET/Socket"]


def test_a_log_without_connections_names_no_transport():
    assert nccl_log.transports("x:1:2 [0] NCCL INFO Using network Socket\n") == []
