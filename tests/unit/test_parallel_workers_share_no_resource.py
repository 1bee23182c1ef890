"""The suite runs on parallel workers (tests/parallel.py): no two workers ever hold a resource
with a fixed place on the machine, and the private engines tests start at once never share a
network."""

from __future__ import annotations

import re
from pathlib import Path

import dockerd
import parallel
from hypothesis import given
from hypothesis import strategies as st

TESTS = Path(__file__).resolve().parents[1]

FILES = st.dictionaries(
    st.text("abcdef/", min_size=1, max_size=8),
    st.sets(st.sampled_from([*parallel.FIXED_PLACE, "tmp_path", "cli", "pg_server"])),
    max_size=12,
)


@given(FILES)
def test_files_that_share_a_fixed_resource_share_a_worker(fixtures_by_file):
    group = parallel.groups(fixtures_by_file)
    assert set(group) == set(fixtures_by_file)
    for f, names in fixtures_by_file.items():
        fixed = set(names) & set(parallel.FIXED_PLACE)
        if not fixed:
            assert group[f] == f  # a file of its own: its module fixtures made once
        for g, other in fixtures_by_file.items():
            if fixed & set(other):
                assert group[g] == group[f], (f, g)


def test_a_file_using_two_resources_joins_their_groups():
    group = parallel.groups({"a": {"engine2"}, "b": {"cluster"}, "c": {"engine2", "cluster"}})
    assert group["a"] == group["b"] == group["c"] == "engine2+cluster"


def test_every_private_engine_has_a_network_of_its_own():
    names = set()
    for path in TESTS.rglob("*.py"):
        names |= set(re.findall(r'"(vlch-[a-z0-9-]+)"', path.read_text()))
    assert len(names) >= 5, names  # the engines of the multi-node, remote, signal and disk tests
    subnets = {dockerd.subnet(n) for n in names}
    assert len(subnets) == len(names), sorted((dockerd.subnet(n), n) for n in names)
    # none of them is the test engine's default (172.17.0.0/16) or the machine's own network
    assert all(s.startswith("10.250.") for s in subnets)


def test_the_real_files_group_by_what_they_use():
    root = TESTS.parent
    found = parallel.fixtures_by_file(root, TESTS)
    group = parallel.groups(found)
    remote = [f for f in found if "engine2" in found[f]]
    slurm = [f for f in found if "cluster" in found[f]]
    assert "tests/integration/test_remote_engine.py" in remote and len(slurm) >= 2, (remote, slurm)
    assert len({group[f] for f in remote}) == 1 and len({group[f] for f in slurm}) == 1
    alone = "tests/unit/test_counted_nouns.py"
    assert group[alone] == alone  # a file of its own
