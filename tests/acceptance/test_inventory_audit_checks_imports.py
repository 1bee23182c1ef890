"""The inventory audit imports each framework package it lists: on the broken-torchvision
image (Debian's torch 1.13 with a torchvision whose native library has an undefined
symbol, scripts/build-test-images.sh) the audit is not clean and says "installed but does
not import" with the error; on a sound image every framework package imports."""

import json

import pytest

pytestmark = pytest.mark.docker

BROKEN = "cpu_debian12_py3.11_pytorch_1.13_broken_torchvision"
SOUND = "cpu_debian12_py3.11_pytorch_1.13"


def test_broken_torchvision_is_not_clean(cli):
    proc = cli("inventory", "audit", "--image", BROKEN, "--pull", "never", "--json")
    assert proc.returncode == 1, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["drift"] is True and report["exit_code"] == 1
    (broken,) = [f for f in report["findings"] if f["kind"] == "broken"]
    assert broken["component"] == "torchvision"
    assert (
        "undefined symbol" in report["imports"]["torchvision"]
        and report["imports"]["pytorch"] == "ok"
    )
    assert (
        "installed but does not import" in broken["message"]
        and "undefined symbol" in broken["message"]
    )
    # the terminal table and the Markdown say the same, in words
    term = cli("inventory", "audit", "--image", BROKEN, "--pull", "never")
    assert term.returncode == 1
    assert "installed but does not import" in term.stdout and "undefined symbol" in term.stdout
    assert "not clean" in term.stdout and "clean ·" not in term.stdout.replace("not clean", "")
    md = cli("inventory", "audit", "--image", BROKEN, "--pull", "never", "--format", "md")
    assert (
        md.returncode == 1
        and "Installed but does not import" in md.stdout
        and "undefined symbol" in md.stdout
    )


def test_sound_image_imports_every_framework_package(cli):
    """Every package imports; what keeps this image from clean is only its torch module's
    version, which is not the one dpkg installed (test_inventory_audit_names_both_versions)."""
    proc = cli("inventory", "audit", "--image", SOUND, "--pull", "never", "--json")
    report = json.loads(proc.stdout)
    assert not [f for f in report["findings"] if f["kind"] == "broken"]
    assert report["imports"] == {"pytorch": "ok", "numpy": "ok"}, report["imports"]
    gating = {f["kind"] for f in report["findings"] if f["kind"] not in ("ok", "unpinned")}
    assert gating == {"differs"} and proc.returncode == 1, proc.stderr[-2000:]
