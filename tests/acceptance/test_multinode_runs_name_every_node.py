"""A multi-node run names every node it ran on, not only rank 0's host: the run's summary
line and ``results show`` list each node (the two-engine run in
test_multinode_docker_engines.py checks them end to end), and ``jobs show`` says how many
nodes a suite spans."""

import pytest
from root_helpers import run_cli

from orchestrator.store.reads import node_hosts

pytestmark = pytest.mark.cli


def test_jobs_show_says_the_node_count():
    done = run_cli("jobs", "show", "multinode", env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert "nodes 2" in done.stdout, done.stdout


def test_a_run_names_each_node_once_in_rank_order():
    meta = {
        "multinode": {
            "probe": {"nodes": [{"rank": 0, "host": "nodeA"}, {"rank": 1, "host": "nodeB"}]}
        },
        "image": {"index_digest": None},
        "smoke": {"probe": {}},
    }
    assert node_hosts("nodeA", meta) == ["nodeA", "nodeB"]
    assert node_hosts("solo", {}) == ["solo"]
