"""Gang placement: a multi-node task takes N hosts at once, or none (pure)."""

import pytest

from orchestrator.errors import InputError, NoMatchingHostError
from orchestrator.hosts.match import Requirement
from orchestrator.scheduling.flight import Item, Launch
from orchestrator.scheduling.placement import Need, lower_bound, place
from orchestrator.scheduling.plan import distinct_addresses
from orchestrator.spec import GPU, HostSpec, ImageSpec, SuiteRef, Task

CPU = Requirement(backend="cpu", gpus=0)


def amd(n, arch="gfx942"):
    return tuple(GPU(vendor="amd", arch=arch, index=i, render_minor=128 + i) for i in range(n))


def hosts(n, gpus=0, slots=1):
    return tuple(
        HostSpec(name=f"h{i}", gpus=amd(gpus), slots=slots, address=f"10.0.0.{i + 1}")
        for i in range(n)
    )


def test_gang_takes_n_distinct_hosts_from_one_start_to_one_end():
    inv = hosts(4)
    p = place([Need("a", CPU, 5.0), Need("g", CPU, 10.0, nodes=3)], inv)
    g = p.by_key["g"]
    assert len(set(g.hosts)) == 3 and g.host == g.hosts[0]
    assert (g.start, g.end) == (0.0, 10.0)
    a = p.by_key["a"]
    assert a.host not in g.hosts  # the fourth host runs the single task beside the gang
    assert p.makespan == 10.0


def test_gang_waits_for_all_of_its_hosts_never_a_partial_start():
    inv = hosts(2)
    # the single task is longer than the gang: placed first, on h0; the gang must wait for h0
    p = place([Need("long", CPU, 30.0), Need("g", CPU, 10.0, nodes=2)], inv)
    g = p.by_key["g"]
    assert set(g.hosts) == {"h0", "h1"}
    assert g.start == 30.0  # both hosts reserved from the same start: none held while waiting
    assert (
        p.makespan
        == 40.0
        >= lower_bound([Need("long", CPU, 30.0), Need("g", CPU, 10.0, nodes=2)], inv)
    )


def test_gang_gpus_per_node_on_every_node():
    req = Requirement(backend="rocm", archs=("gfx942",), gpus=2)
    p = place([Need("g", req, 5.0, nodes=2)], hosts(3, gpus=4))
    g = p.by_key["g"]
    assert g.node_gpus == ((0, 1), (0, 1))


def test_more_nodes_than_the_cluster_names_what_is_missing():
    with pytest.raises(NoMatchingHostError) as err:
        place([Need("g", CPU, 5.0, nodes=3, label="img")], hosts(2))
    assert "no set of 3 hosts can run img on 3 nodes" in err.value.message
    assert "the inventory has 2 hosts, the task needs 3 nodes" in err.value.message
    assert err.value.exit_code == 3


def test_gpus_per_node_above_every_node_names_what_they_lack():
    req = Requirement(backend="rocm", gpus=8)
    with pytest.raises(NoMatchingHostError) as err:
        place([Need("g", req, 5.0, nodes=2, label="img")], hosts(3, gpus=4))
    assert "8 AMD GPU(s)" in err.value.message and "has 4" in err.value.message


def test_too_few_matching_hosts_names_the_others():
    inv = (*hosts(2, gpus=2), HostSpec(name="small", gpus=amd(1), address="10.0.1.1"))
    with pytest.raises(NoMatchingHostError) as err:
        place([Need("g", Requirement(backend="rocm", gpus=2), 5.0, nodes=3, label="img")], inv)
    assert "2 of the 3 hosts match (h0, h1)" in err.value.message
    assert "small: lacks 2 AMD GPU(s)" in err.value.message


def test_lower_bound_counts_every_node_of_a_gang():
    needs = [Need("g", CPU, 10.0, nodes=4)] + [Need(f"s{i}", CPU, 10.0) for i in range(4)]
    inv = hosts(4)
    assert lower_bound(needs, inv) == 20.0
    assert place(needs, inv).makespan == 20.0


def test_duplicate_addresses_are_bad_input():
    inv = (
        HostSpec(name="a", endpoint="tcp://10.1.1.1:2376"),
        HostSpec(name="b", address="10.1.1.1"),
    )
    with pytest.raises(InputError) as err:
        distinct_addresses(inv)
    assert "hosts a and b have the same address 10.1.1.1" in err.value.message


def test_net_address_from_the_endpoint():
    assert HostSpec(name="a", endpoint="tcp://10.1.1.1:2376").net_address == "10.1.1.1"
    assert HostSpec(name="a", endpoint="ssh://me@node7").net_address == "node7"
    assert HostSpec(name="a").net_address == "127.0.0.1"
    assert HostSpec(name="a", address="192.168.0.9").net_address == "192.168.0.9"


def test_nodes_zero_is_refused_by_the_spec():
    with pytest.raises(ValueError):
        SuiteRef(name="multinode", nodes=0)


def _item(name, nodes, expected):
    inv = {h.name: h for h in hosts(3)}
    image = ImageSpec(alias="img", reference="img:1", backend="cpu")
    task = Task(
        image=image,
        suite=SuiteRef(name=name),
        host=inv[nodes[0]],
        checks=(),
        nodes=tuple(inv[n] for n in nodes) if len(nodes) > 1 else (),
    )
    return Item(task, "run", 1, expected)


def test_launch_starts_a_gang_all_at_once_and_keeps_its_hosts_from_later_tasks():
    inv = hosts(3)
    busy = _item("busy", ["h1"], 100.0)  # longest: starts first, holds h1
    gang = _item("gang", ["h0", "h1"], 50.0)
    small = _item("small", ["h0"], 1.0)  # behind the gang: must not take h0 while the gang waits
    other = _item("other", ["h2"], 1.0)
    launch = Launch([busy, gang, small, other], inv, executor_for=None, reporter=None)
    launch.flight.start = lambda thread: None  # nothing runs: only the slots are looked at
    started = launch.start_ready()
    assert [it.task.suite.name for it in started] == ["busy", "other"]
    assert launch.pools["h0"].cpu == 1  # the gang holds nothing while it waits
    launch.done.put((busy, [("h1", ())], None))
    launch.next_done()
    started = launch.start_ready()
    assert [it.task.suite.name for it in started] == ["gang"]
    assert launch.pools["h0"].cpu == 0 and launch.pools["h1"].cpu == 0
