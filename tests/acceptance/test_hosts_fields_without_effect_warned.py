"""A hosts-file field that has no effect on the run asked for is said, never silently
ignored: a warning naming the file, line, key and host, and the run goes on (a hosts file
is an inventory shared by every job; the field acts for the next one).

Every field that declares it acts in a container (``spec.HostSpec``, orchestrator/applies.py)
is run through the real console script with a run of the image host; the same hosts file on
a run that has no hosts file field to ignore says nothing.
"""

from __future__ import annotations

import pytest
from conftest import run_cli

from orchestrator import applies
from orchestrator.spec import HostSpec

RUN = ("run", "--image", "host", "--suite", "selftest", "--check", "selftest.pass", "--no-matrix")
#: a value for each declared field, as the hosts file writes it
EXAMPLES = {
    "container_memory": "'4g'",
    "container_cpus": "2",
    "nvidia_runtime": "true",
    "rdma": "['/dev/infiniband/uverbs0']",
}


def test_every_declared_field_has_an_example():
    assert {key for key, _ in applies.fields(HostSpec)} == set(EXAMPLES)


@pytest.mark.parametrize("key", sorted(EXAMPLES))
def test_each_hosts_field_is_a_warning_naming_file_line_and_key(key, tmp_path):
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text(f"hosts:\n  - name: here\n    slots: 1\n    {key}: {EXAMPLES[key]}\n")
    proc = run_cli(*RUN, "--hosts", str(hosts), db=tmp_path / "s.sqlite")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = f"warning: {hosts}:4: host inventory: key '{key}' of host here has no effect"
    assert said in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_hosts_file_through_the_environment_is_warned_about_too(tmp_path):
    import os

    hosts = tmp_path / "hosts.yaml"
    hosts.write_text("- name: here\n  container_memory: 4g\n")
    env = {**os.environ, "VALORCH_HOSTS": str(hosts)}
    proc = run_cli(*RUN, db=tmp_path / "s.sqlite", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{hosts}:2: host inventory: key 'container_memory'" in proc.stderr


def test_fields_at_their_default_or_absent_say_nothing(tmp_path):
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text("- name: here\n  slots: 2\n  nvidia_runtime: false\n  rdma: []\n")
    proc = run_cli(*RUN, "--hosts", str(hosts), db=tmp_path / "s.sqlite")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "has no effect" not in proc.stderr
