"""An engine that answers 409 Conflict to a second create of the published volume (Docker
returns the existing one; some Docker-compatible engines refuse instead): the publisher
that lost uses the winner's data and removes its own. The engine's refusal cannot be
provoked on Docker itself, so a stand-in answers as such an engine does."""

from __future__ import annotations

import docker.errors
import requests

from orchestrator.executors import probe_volume


class _Volume:
    def __init__(self, store: dict, name: str, labels: dict) -> None:
        self.store, self.name, self.attrs = store, name, {"Labels": dict(labels)}

    def remove(self) -> None:
        self.store.pop(self.name, None)


class _Volumes:
    def __init__(self) -> None:
        self.store: dict[str, _Volume] = {}

    def create(self, name: str, labels: dict) -> _Volume:
        if name in self.store:
            response = requests.Response()
            response.status_code = 409
            raise docker.errors.APIError("conflict", response=response)
        self.store[name] = _Volume(self.store, name, labels)
        return self.store[name]

    def get(self, name: str) -> _Volume:
        if name not in self.store:
            raise docker.errors.NotFound(name)
        return self.store[name]

    def list(self, filters: dict) -> list[_Volume]:
        return list(self.store.values())


class _Engine:
    def __init__(self) -> None:
        self.volumes = _Volumes()


def test_the_publisher_that_lost_a_conflict_uses_the_winners_data(monkeypatch):
    engine = _Engine()
    digest = probe_volume.probe_package()[1]
    winner = f"{probe_volume.PREFIX}{digest}-winner"
    engine.volumes.create(winner, {probe_volume.VERSION_LABEL: digest})

    def fill(client, image, volume, archive, digest):
        # the other valorch seals while this one fills
        client.volumes.create(
            probe_volume.PREFIX + digest,
            {probe_volume.VERSION_LABEL: digest, probe_volume.DATA_LABEL: winner},
        )

    monkeypatch.setattr(probe_volume, "_fill", fill)
    mount = probe_volume.mount(engine, "img")
    assert mount["Source"] == winner and mount["ReadOnly"] is True
    assert set(engine.volumes.store) == {winner, probe_volume.PREFIX + digest}
