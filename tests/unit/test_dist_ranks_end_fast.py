"""Rank processes (valorch_probe/checks/_dist.run_ranks) with stand-in rank scripts that
behave as torch 2.6's did in the CUDA test image: a rank dying on a missing optional module
("RuntimeError: Numpy is not available", from all_gather_object inside init_rpc) while its
peer waits for it, and a rank that answers and then never returns from gloo's teardown."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from valorch_probe.checks import _dist
from valorch_probe.context import Fail, Skip

DIES_ON_NUMPY = """
import sys, json, time
rank = json.loads(sys.argv[1])["rank"]
if rank == 0:
    print("  File \\"distributed_c10d.py\\", line 2960, in _tensor_to_object")
    print("RuntimeError: Numpy is not available"); sys.exit(1)
time.sleep(3600)  # the peer, waiting in a collective for rank 0
"""
LINGERS = """
import sys, json, time
rank = json.loads(sys.argv[1])["rank"]
print("RANK_RESULT " + json.dumps({"all_reduce": True, "rank": rank}), flush=True)
if rank == 0:
    time.sleep(3600)  # answered, then stuck in destroy_process_group
"""
BROKEN = """
import sys
print("ModuleNotFoundError: No module named 'torch._C'"); sys.exit(1)
"""


def ranks(tmp_path, monkeypatch, body):
    script = tmp_path / "ranks.py"
    script.write_text(body)
    monkeypatch.setattr(_dist, "RANKS", str(script))
    monkeypatch.setattr(_dist, "RANK_TIMEOUT_S", 120.0)  # a hang would end in Fail, not below


def test_a_rank_dead_on_a_missing_optional_module_is_a_skip_naming_it(tmp_path, monkeypatch):
    ranks(tmp_path, monkeypatch, DIES_ON_NUMPY)
    with pytest.raises(Skip) as got:
        _dist.run_ranks("rpc", 2)
    assert "not measurable in this image: no numpy" in got.value.message
    assert "install numpy" in got.value.message and "passed" not in got.value.message


def test_ranks_that_all_answered_are_not_held_by_a_lingering_teardown(tmp_path, monkeypatch):
    ranks(tmp_path, monkeypatch, LINGERS)
    answers = _dist.run_ranks("collectives", 2)
    assert [a["rank"] for a in answers] == [0, 1]


def test_torch_missing_its_own_parts_is_a_failure_not_a_skip(tmp_path, monkeypatch):
    ranks(tmp_path, monkeypatch, BROKEN)
    with pytest.raises(Fail):
        _dist.run_ranks("collectives", 2)


@given(st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True))
def test_missing_module_names_the_top_level_module(name):
    text = "Traceback ...\nModuleNotFoundError: No module named '%s.sub'\n" % name
    assert _dist.missing_module(text) == (None if name == "torch" else name)
