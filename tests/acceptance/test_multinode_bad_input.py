"""Bad input for a multi-node task, through the real CLI: each exits 2 (the spec, the hosts
file) or 3 (no set of hosts can run it) with a message that names what is wrong, before
any engine is contacted (the hosts' endpoints here answer nothing)."""

import pytest


def hosts_file(tmp_path, entries):
    path = tmp_path / "hosts.yaml"
    path.write_text("hosts:\n" + "".join(entries))
    return path


def node(name, address, gpus=0):
    gpu = "".join(
        f"\n      - {{vendor: amd, arch: gfx942, index: {i}, render_minor: {128 + i}}}"
        for i in range(gpus)
    )
    return f"  - name: {name}\n    endpoint: tcp://{address}:1\n    slots: 1\n" + (
        f"    gpus:{gpu}\n" if gpus else ""
    )


def job(tmp_path, image, suite):
    path = tmp_path / "job.yaml"
    path.write_text(f"name: gang\nimages: [{image}]\nsuites:\n  - {suite}\n")
    return path


CPU_IMAGE = "cpu_debian12_py3.11_pytorch_1.13"


def run_gang(cli, tmp_path, suite, nodes, image=CPU_IMAGE):
    """`valorch run --job JOB --hosts HOSTS --no-gate`: the job runs ``suite`` of ``image`` on a
    hosts file of ``nodes`` (node() entries)."""
    inv = hosts_file(tmp_path, nodes)
    return cli("run", "--job", str(job(tmp_path, image, suite)), "--hosts", str(inv), "--no-gate")


def test_nodes_zero_is_bad_input_naming_the_key(cli, tmp_path):
    res = cli(
        "run", "--job", str(job(tmp_path, CPU_IMAGE, "{name: multinode, nodes: 0}")), "--no-gate"
    )
    assert res.returncode == 2, res.stderr
    assert "nodes" in res.stderr and "job.yaml:4" in res.stderr and "Traceback" not in res.stderr


def test_more_nodes_than_the_hosts_file_has_exits_3(cli, tmp_path):
    nodes = [node("n1", "10.9.0.1"), node("n2", "10.9.0.2")]
    res = run_gang(cli, tmp_path, "{name: multinode, nodes: 3}", nodes)
    assert res.returncode == 3, res.stderr
    assert (
        "no set of 3 hosts" in res.stderr
        and "the inventory has 2 hosts, the task needs 3 nodes" in res.stderr
    )


@pytest.mark.parametrize("image", ["rocm6.3_ubuntu24.04_py3.12_pytorch_2.4"])
def test_gpus_per_node_above_every_node_exits_3(cli, tmp_path, image):
    nodes = [node("n1", "10.9.0.1", gpus=2), node("n2", "10.9.0.2", gpus=2)]
    res = run_gang(cli, tmp_path, "{name: multinode, nodes: 2, gpus_per_node: 4}", nodes, image)
    assert res.returncode == 3, res.stderr
    assert "4 AMD GPU(s)" in res.stderr and "has 2" in res.stderr


def test_duplicate_addresses_in_the_hosts_file_exit_2(cli, tmp_path):
    nodes = [node("n1", "10.9.0.1"), node("n2", "10.9.0.1")]
    res = run_gang(cli, tmp_path, "{name: multinode, nodes: 2}", nodes)
    assert res.returncode == 2, res.stderr
    assert "hosts n1 and n2 have the same address 10.9.0.1" in res.stderr
