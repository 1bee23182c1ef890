"""When a module reports a version that is not the one its package manager installed,
``valorch inventory audit`` shows both and says they differ in every output, instead of
reporting the environment clean. The real case: Debian bookworm's python3-torch
1.13.1+dfsg-4 (scripts/build-test-images.sh, valorch/test:debian-torch) installs a torch
whose metadata says 1.13.0a0+gitunknown and whose torch.__version__ says 1.13.0a0."""

import json

import pytest

pytestmark = pytest.mark.docker

IMAGE = "cpu_debian12_py3.11_pytorch_1.13"


def test_debian_torch_audit_names_the_module_and_the_dpkg_version_everywhere(cli):
    term = cli("inventory", "audit", "--image", IMAGE, "--pull", "never", env={"COLUMNS": "250"})
    assert term.returncode == 1, term.stdout[-2000:] + term.stderr[-2000:]
    said = " ".join(term.stdout.split())
    assert "versions differ: pytorch: the module reports 1.13.0a0+gitunknown" in said
    assert "dpkg installed python3-torch 1.13.1+dfsg-4" in said
    assert "not clean: 1 module version(s) not the package manager's" in said
    assert "clean ·" not in said.replace("not clean", "")
    runs = json.loads(cli("inventory", "list", "--image", IMAGE, "--json").stdout)
    run = runs[0]["run"]
    md = cli("inventory", "show", run, "--format", "md")
    assert md.returncode == 0, md.stderr[-2000:]
    assert "**VERSIONS DIFFER**" in md.stdout and "## Module vs package manager" in md.stdout
    assert "1.13.1+dfsg-4 (dpkg python3-torch)" in md.stdout
    shown = cli("inventory", "show", run, env={"COLUMNS": "250"})
    assert "versions differ" in shown.stdout and "1.13.1+dfsg-4" in shown.stdout


def test_the_json_audit_carries_both_versions_and_the_exit_code(cli):
    proc = cli("inventory", "audit", "--image", IMAGE, "--pull", "never", "--json")
    report = json.loads(proc.stdout)
    (differs,) = [f for f in report["findings"] if f["kind"] == "differs"]
    assert differs["component"] == "pytorch"
    assert differs["found"] == "1.13.0a0+gitunknown"
    assert differs["expected"] == "1.13.1+dfsg-4 (dpkg python3-torch)"
    assert "the versions differ" in differs["message"]
    assert report["drift"] is True and report["exit_code"] == 1 == proc.returncode
