"""A hosts-file field that has no effect on the run asked for is said, never silently
ignored: a warning naming the file, line, key and host, and the run goes on (a hosts file
is an inventory shared by every job; the field acts for the next one).

Every rule of the table (orchestrator/services/hosts_fields.py) is run through the real
console script with a run of the image host; the same hosts file on a run that has no hosts
file field to ignore says nothing.
"""

from __future__ import annotations

import pytest
from conftest import run_cli

from orchestrator.services.hosts_fields import HOSTS_FIELD_RULES, HostsFieldRule

RUN = ("run", "--image", "host", "--suite", "selftest", "--check", "selftest.pass", "--no-matrix")


@pytest.mark.parametrize("rule", HOSTS_FIELD_RULES, ids=[r.key for r in HOSTS_FIELD_RULES])
def test_each_hosts_field_rule_is_a_warning_naming_file_line_and_key(
    rule: HostsFieldRule, tmp_path
):
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text(f"hosts:\n  - name: here\n    slots: 1\n    {rule.key}: {rule.example}\n")
    proc = run_cli(*RUN, "--hosts", str(hosts), db=tmp_path / "s.sqlite")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = f"warning: {hosts}:4: host inventory: key '{rule.key}' of host here has no effect"
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
