"""The hosts-file field table warns only where no container starts: the same file on a run
of a container image (where the fields act) says nothing."""

from __future__ import annotations

from pathlib import Path

from orchestrator.catalog.core import Catalog
from orchestrator.scheduling.plan import PlannedRun
from orchestrator.services.hosts_fields import HOSTS_FIELD_RULES, unused_fields
from orchestrator.spec import HostSpec

ROOT = Path(__file__).resolve().parents[2]
CAT = Catalog.load(ROOT / "images")


def _hosts(tmp_path) -> Path:
    path = tmp_path / "hosts.yaml"
    path.write_text(
        "- name: here\n" + "".join(f"  {r.key}: {r.example}\n" for r in HOSTS_FIELD_RULES)
    )
    return path


def _planned(alias: str) -> list[PlannedRun]:
    (image,) = CAT.select([alias])
    return [PlannedRun(image=image, host=HostSpec(name="here"), tasks=())]


def test_a_container_run_is_told_nothing(tmp_path):
    assert unused_fields(_hosts(tmp_path), _planned("cpu_debian12_py3.11_pytorch_2.13")) == []


def test_a_host_run_is_told_of_every_field(tmp_path):
    said = unused_fields(_hosts(tmp_path), _planned("host"))
    assert [s.split("key '")[1].split("'")[0] for s in said] == [r.key for r in HOSTS_FIELD_RULES]


def test_mixed_images_are_told_nothing(tmp_path):
    planned = _planned("host") + _planned("cpu_debian12_py3.11_pytorch_2.13")
    assert unused_fields(_hosts(tmp_path), planned) == []


def test_no_hosts_file_is_told_nothing():
    assert unused_fields(None, _planned("host")) == []
