"""Every file valorch writes is written beside its target and renamed into place
(orchestrator/outfile.py): a symbolic link planted where a file goes is replaced, never
written through (the file it pointed to is untouched); on a full disk no partial file is
left and the command exits 3 saying to free space. Through the real CLI, on one host run
staged once for the module; the full disk is a 64 KiB tmpfs mounted by the test (root)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.acceptance.gate_support import job, publish_baseline, qualify
from tests.conftest import run_cli

SECRET = "the victim's own content\n"


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    """A store with one host run of selftest.pass, published as baseline ``base``."""
    d = tmp_path_factory.mktemp("staged")
    db = d / "v.sqlite"

    def cli(*args, **kw):
        return run_cli(*args, db=db, **kw)

    path = job(d, "outs", ["selftest.pass"])
    publish_baseline(cli, path, "v1", "base")
    runs = json.loads(cli("results", "list", "--json").stdout)
    return cli, path, runs[0]["run"]


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim.txt"
    victim.write_text(SECRET)
    return victim


def _plant(link: Path, victim: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(victim)


@pytest.mark.parametrize("command", ["results export", "matrix render"])
def test_a_link_planted_at_out_is_replaced_not_written_through(staged, tmp_path, command):
    cli, _, run_id = staged
    victim = _victim(tmp_path)
    out = tmp_path / "shared" / "out.txt"
    _plant(out, victim)
    args = ["results", "export", run_id] if command == "results export" else ["matrix", "render"]
    done = cli(*args, "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == SECRET
    assert not out.is_symlink() and out.is_file() and out.read_text() != SECRET
    assert sorted(p.name for p in out.parent.iterdir()) == ["out.txt"]  # no temporary left


def test_qualify_out_dir_replaces_links_planted_in_it(staged, tmp_path):
    cli, path, _ = staged
    victim = _victim(tmp_path)
    out = tmp_path / "reports"
    for name in ("report.md", "report.junit.xml"):
        _plant(out / name, victim)
    done = qualify(cli, path, "base", out)
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == SECRET
    for name in ("report.md", "report.junit.xml"):
        assert not (out / name).is_symlink() and (out / name).read_text() != SECRET


@pytest.fixture
def full_disk(tmp_path):
    """A 64 KiB tmpfs filled to its last byte; unmounted afterwards."""
    mnt = tmp_path / "full"
    mnt.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (root needed): {done.stderr.strip()}")
    try:
        with contextlib.suppress(OSError), open(mnt / "filler", "wb") as f:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
                os.fsync(f.fileno())
        (mnt / "out").mkdir()
        yield mnt / "out"
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


@pytest.mark.parametrize("command", ["results export", "matrix render"])
def test_a_full_disk_leaves_no_partial_file_and_is_exit_3(staged, full_disk, command):
    cli, _, run_id = staged
    out = full_disk / "out.txt"
    args = ["results", "export", run_id] if command == "results export" else ["matrix", "render"]
    done = cli(*args, "--out", str(out))
    assert done.returncode == 3, done.stderr
    assert "the disk is full" in done.stderr and "free space" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert list(full_disk.iterdir()) == []


def test_site_build_on_a_full_disk_is_exit_3_with_the_hint_to_free_space(staged, full_disk):
    cli, _, _ = staged
    done = cli("site", "build", "--out", str(full_disk / "site"))
    assert done.returncode == 3, done.stderr
    assert "the disk is full" in done.stderr and "free space" in done.stderr, done.stderr
    assert list(full_disk.iterdir()) == []
