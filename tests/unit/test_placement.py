import pytest

from orchestrator.errors import NoMatchingHostError
from orchestrator.hosts.match import Requirement
from orchestrator.scheduling.placement import Need, lower_bound, place
from orchestrator.spec import GPU, HostSpec

CPU = Requirement(backend="cpu", gpus=0)
ROCM = Requirement(backend="rocm", archs=("gfx942",), gpus=1)


def amd(n, arch="gfx942"):
    return tuple(GPU(vendor="amd", arch=arch, index=i, render_minor=128 + i) for i in range(n))


MI300 = HostSpec(name="mi300", gpus=amd(2), slots=1)
MI250 = HostSpec(name="mi250", gpus=amd(1, "gfx90a"), slots=1)
CPU2 = HostSpec(name="cpu", slots=2)


def test_cpu_tasks_fill_every_slot_longest_first():
    needs = [Need(f"t{i}", CPU, d) for i, d in enumerate([5, 4, 3, 3, 1])]
    p = place(needs, (CPU2, MI300))
    assert {a.host for a in p.assignments} == {"cpu", "mi300"}
    # LPT on 3 slots: {5}, {4,1}, {3,3}
    assert p.makespan == 6
    assert p.makespan >= lower_bound(needs, (CPU2, MI300))


def test_cpu_ties_prefer_hosts_without_gpus():
    p = place([Need("a", CPU, 1.0)], (MI300, CPU2))
    assert p.host_of("a") == "cpu"


def test_gpu_tasks_pinned_to_distinct_gpus_of_the_right_arch():
    needs = [Need(f"g{i}", ROCM, 10) for i in range(4)]
    p = place(needs, (MI250, MI300, CPU2))
    assert {a.host for a in p.assignments} == {"mi300"}
    first = sorted((a.start, a.gpus) for a in p.assignments)
    assert first[0][1] != first[1][1] and first[0][0] == first[1][0] == 0
    assert p.makespan == 20


def test_multi_gpu_task_waits_for_enough_gpus():
    p = place(
        [Need("one", ROCM, 10), Need("two", Requirement(backend="rocm", gpus=2), 5)], (MI300,)
    )
    two = p.by_key["two"]
    assert two.gpus == (0, 1)
    assert p.makespan == 15


def test_no_matching_host_names_the_nearest():
    with pytest.raises(NoMatchingHostError) as exc:
        place([Need("x", Requirement(backend="cuda", gpus=1), 1, label="cuda-img")], (MI300, CPU2))
    assert "cuda-img" in str(exc.value) and "mi300" in str(exc.value)


def test_excluded_host_is_not_used_for_a_retry():
    other = HostSpec(name="cpu-b", slots=1)
    p = place([Need("r", CPU, 1, exclude=frozenset({"cpu"}))], (CPU2, other))
    assert p.host_of("r") == "cpu-b"


def test_busy_offsets_delay_a_host():
    other = HostSpec(name="cpu-b", slots=1)
    p = place([Need("r", CPU, 1)], (CPU2, other), busy={"cpu": 100.0})
    assert p.host_of("r") == "cpu-b"
