"""The satellites' registry (orchestrator/satellites.py) matches the tree, the extras and the
import contracts: a satellite cannot be added, moved or dropped in one place only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomllib

from orchestrator import satellites
from orchestrator.cli import _attribute
from orchestrator.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _contract(prefix: str) -> dict:
    (found,) = [
        c for c in CONFIG["tool"]["importlinter"]["contracts"] if c["name"].startswith(prefix)
    ]
    return found


def test_every_package_under_ext_is_a_registered_satellite():
    packages = {p.parent.name for p in (ROOT / "orchestrator" / "ext").glob("*/__init__.py")}
    assert packages == set(satellites.BY_NAME)


def test_each_satellite_has_its_extra_and_all_has_every_one():
    extras = CONFIG["project"]["optional-dependencies"]
    for s in satellites.SATELLITES:
        assert s.name in extras, s.name
    (everything,) = extras["all"]
    named = set(re.search(r"\[(.*)\]", everything).group(1).split(","))
    assert named == {s.name for s in satellites.SATELLITES}
    # the core's own dependencies bring none of the satellites' packages
    core = " ".join(CONFIG["project"]["dependencies"]).lower()
    for s in satellites.SATELLITES:
        for dist in extras[s.name]:
            assert dist.split("[")[0].split(">")[0].lower() not in core, (s.name, dist)


def test_the_contracts_name_every_satellite():
    independent = set(_contract("Satellites are independent")["modules"])
    assert independent == {f"orchestrator.ext.{s.name}" for s in satellites.SATELLITES}
    core = _contract("The core never imports a satellite")
    assert core["forbidden_modules"] == ["orchestrator.ext"]
    tops = {
        p.stem if p.is_file() else p.name
        for p in (ROOT / "orchestrator").iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()
    }
    assert {m.removeprefix("orchestrator.") for m in core["source_modules"]} == tops - {"ext"}


def test_each_command_the_registry_names_exists():
    for s in satellites.SATELLITES:
        for name, ref in s.commands:
            command = _attribute(f"orchestrator.ext.{s.name}", ref)
            assert callable(command) or hasattr(command, "registered_commands"), (s.name, name)


def test_a_satellite_without_its_packages_is_exit_2_with_the_install_command(monkeypatch):
    monkeypatch.setattr(satellites, "_absent", lambda package: package == "securesystemslib")
    with pytest.raises(InputError) as caught:
        satellites.require("attest", "valorch attest")
    assert caught.value.exit_code == 2
    assert "securesystemslib" in caught.value.message and "valorch attest" in caught.value.message
    assert caught.value.hint == "pip install 'valorch[attest]'"
    satellites.require("notify", "--notify")  # no packages of its own: always there
    satellites.require("site", "valorch site build")  # its plots are its own SVG: the same
