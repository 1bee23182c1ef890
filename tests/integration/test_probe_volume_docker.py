"""The probe reaches a container from a volume filled once per engine and probe version,
on the real engine: published once and then only looked up, one winner when several
valorch processes publish at once, published again when its data volume went (or was
replaced by an empty one), other versions' unused volumes removed, and mounted read-only
where the probe runs."""

from __future__ import annotations

import json
import secrets
import threading
from datetime import timedelta

import docker
import pytest

from orchestrator.executors import probe_volume
from orchestrator.executors.base import probe_package

IMAGE = "valorch/base:bookworm"


@pytest.fixture()
def engine():
    return docker.from_env()


@pytest.fixture()
def version(monkeypatch, engine):
    """A probe version of this test's own, so that the volumes it makes and removes are
    no other test's; removed afterwards."""
    archive, _ = probe_package()
    digest = f"test{secrets.token_hex(6)}"
    monkeypatch.setattr(probe_volume, "probe_package", lambda: (archive, digest))
    yield digest
    for volume in _volumes(engine, digest):
        volume.remove(force=True)


def _volumes(engine, digest):
    return engine.volumes.list(filters={"label": f"{probe_volume.VERSION_LABEL}={digest}"})


def _names(engine, digest) -> set[str]:
    return {v.name for v in _volumes(engine, digest)} | (
        {probe_volume.PREFIX + digest} if _sealed(engine, digest) else set()
    )


def _sealed(engine, digest) -> bool:
    try:
        engine.volumes.get(probe_volume.PREFIX + digest)
        return True
    except docker.errors.NotFound:
        return False


def _files(engine, mount) -> list[str]:
    """What a container sees where the probe is mounted, and the mount's flags."""
    out = engine.containers.run(
        IMAGE,
        [
            "python3",
            "-c",
            "import json, os; t = '/opt/valorch/valorch_probe'; "
            "flags = [l.split()[3] for l in open('/proc/self/mounts') if l.split()[1] == t]; "
            "print(json.dumps([sorted(os.listdir(t)), flags]))",
        ],
        mounts=[mount],
        network_mode="none",
        remove=True,
    )
    return json.loads(out)


def test_published_once_then_only_looked_up(engine, version):
    first = probe_volume.mount(engine, IMAGE)
    assert first.get("ReadOnly") is True and first["Target"] == "/opt/valorch/valorch_probe"
    assert first["Source"].startswith(probe_volume.PREFIX + version + "-")
    made = _names(engine, version)
    assert made == {probe_volume.PREFIX + version, first["Source"]}
    again = probe_volume.mount(engine, IMAGE)
    assert again["Source"] == first["Source"] and _names(engine, version) == made
    listing, flags = _files(engine, first)
    assert {"__init__.py", "__main__.py", "runner.py", "checks"} <= set(listing)
    assert flags and flags[0].split(",")[0] == "ro"
    fills = engine.containers.list(
        all=True, filters={"label": f"{probe_volume.VERSION_LABEL}={version}"}
    )
    assert fills == []  # the filling container is gone


def test_several_publishers_agree_on_one(engine, version):
    got: list[str] = []

    def publish() -> None:
        got.append(probe_volume.mount(engine, IMAGE)["Source"])

    threads = [threading.Thread(target=publish) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 4 and len(set(got)) == 1
    assert _names(engine, version) == {probe_volume.PREFIX + version, got[0]}


@pytest.mark.parametrize("replaced_by_empty", [False, True])
def test_a_removed_data_volume_is_published_again(engine, version, replaced_by_empty):
    gone = probe_volume.mount(engine, IMAGE)["Source"]
    engine.volumes.get(gone).remove()
    if replaced_by_empty:  # what the engine makes up when a container names a missing volume
        engine.volumes.create(gone)
    fresh = probe_volume.mount(engine, IMAGE)
    assert fresh["Source"] != gone
    assert "runner.py" in _files(engine, fresh)[0]
    with pytest.raises(docker.errors.NotFound):
        engine.volumes.get(gone)


def test_other_versions_unused_volumes_go(engine, version, monkeypatch):
    archive, _ = probe_package()
    older = f"test{secrets.token_hex(6)}"
    monkeypatch.setattr(probe_volume, "probe_package", lambda: (archive, older))
    kept_in_use = probe_volume.mount(engine, IMAGE)
    holder = engine.containers.create(IMAGE, ["true"], mounts=[kept_in_use])
    try:
        monkeypatch.setattr(probe_volume, "probe_package", lambda: (archive, version))
        probe_volume.mount(engine, IMAGE)  # within a day: another version's volumes stay
        assert kept_in_use["Source"] in _names(engine, older)
        assert _sealed(engine, older)
        monkeypatch.setattr(probe_volume, "STALE", timedelta(0))
        for volume in _volumes(engine, version):  # publish this version again: prunes
            volume.remove(force=True)
        probe_volume.mount(engine, IMAGE)
        assert _names(engine, older) == {kept_in_use["Source"]}  # in use: stays
    finally:
        holder.remove(force=True)
        for volume in _volumes(engine, older):
            volume.remove(force=True)
