"""A hosts file's fields that act in a container (``spec.HostSpec`` declares it) are warned
about only where no container starts: the same file on a run of a container image (where
the fields act), or of both kinds, says nothing."""

from __future__ import annotations

from pathlib import Path

from orchestrator import applies
from orchestrator.hosts.inventory import unused_fields
from orchestrator.spec import HostSpec

VALUES = {"container_memory": "4g", "container_cpus": "2", "nvidia_runtime": "true"}
DECLARED = [key for key, _ in applies.fields(HostSpec)]


def _hosts(tmp_path) -> Path:
    path = tmp_path / "hosts.yaml"
    path.write_text(
        "- name: here\n"
        + "".join(f"  {k}: {VALUES.get(k, '[/dev/infiniband/uverbs0]')}\n" for k in DECLARED)
    )
    return path


def test_a_container_run_is_told_nothing(tmp_path):
    assert unused_fields(_hosts(tmp_path), {"docker"}) == []


def test_a_host_run_is_told_of_every_field(tmp_path):
    said = unused_fields(_hosts(tmp_path), {"host"})
    assert [s.split("key '")[1].split("'")[0] for s in said] == DECLARED


def test_mixed_images_are_told_nothing(tmp_path):
    assert unused_fields(_hosts(tmp_path), {"host", "docker"}) == []


def test_no_hosts_file_is_told_nothing(monkeypatch):
    monkeypatch.delenv("VALORCH_HOSTS", raising=False)
    assert unused_fields(None, {"host"}) == []
