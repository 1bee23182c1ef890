"""The registry client against a real registry: digests by HEAD, basic and token auth from
the user's Docker config, a custom CA, missing tags, wrong passwords, unreachable hosts."""

import base64
import json

import pytest
from registry_support import registry_basic, registry_token, tiny_images  # noqa: F401 (pytest fixtures: requested by name)
from tlscerts import free_port

from orchestrator import imageref
from orchestrator.errors import InfrastructureError
from orchestrator.registry import ManifestNotFoundError, RegistryAuthError, RegistryClient


@pytest.fixture
def env(monkeypatch):
    def use(reg, config=None):
        for k, v in reg.env(config).items():
            monkeypatch.setenv(k, v)

    return use


@pytest.mark.parametrize("which", ["registry_basic", "registry_token"])
def test_resolve_and_platform(request, which, tiny_images, env):  # noqa: F811 (the parameter is the fixture imported above)
    reg = request.getfixturevalue(which)
    env(reg)
    pushed = reg.push(tiny_images[0], "team/tiny:one")
    client = RegistryClient()
    got = client.resolve(imageref.parse(f"{reg.host}/team/tiny:one"))
    assert got.digest == pushed
    assert got.media_type == "application/vnd.docker.distribution.manifest.v2+json"
    plat = client.platform(imageref.parse(f"{reg.host}/team/tiny:one"))
    assert plat.index_digest == plat.manifest_digest == pushed
    assert len(plat.layers) == 1 and 0 < plat.compressed_size < 10_000


def test_index_gives_platform_digest_and_size(registry_basic, tiny_images, env):  # noqa: F811 (the parameter is the fixture imported above)
    """An OCI index over the pushed manifest: the tag's digest is the index's, the platform
    digest is the manifest's, and the size is the platform manifest's layers."""
    import requests

    env(registry_basic)
    reg = registry_basic
    manifest = reg.push(tiny_images[1], "team/multi:m")
    head = requests.get(
        f"https://{reg.host}/v2/team/multi/manifests/{manifest}",
        verify=str(reg.ca),
        auth=reg.auth(),
        headers={"Accept": "application/vnd.docker.distribution.manifest.v2+json"},
    )
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [
            {
                "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
                "digest": manifest,
                "size": len(head.content),
                "platform": {"os": "linux", "architecture": "amd64"},
            }
        ],
    }
    put = requests.put(
        f"https://{reg.host}/v2/team/multi/manifests/latest",
        data=json.dumps(index),
        verify=str(reg.ca),
        auth=reg.auth(),
        headers={"Content-Type": "application/vnd.oci.image.index.v1+json"},
    )
    assert put.status_code == 201, put.text
    client = RegistryClient()
    ref = imageref.parse(f"{reg.host}/team/multi")
    plat = client.platform(ref)
    assert (
        plat.manifest_digest == manifest
        and plat.index_digest == put.headers["Docker-Content-Digest"]
    )
    assert plat.index_digest != plat.manifest_digest
    assert client.resolve(ref).media_type == "application/vnd.oci.image.index.v1+json"
    with pytest.raises(ManifestNotFoundError, match="no linux/arm64 image"):
        client.platform(ref, arch="arm64")


@pytest.mark.parametrize("which", ["registry_basic", "registry_token"])
def test_missing_tag(request, which, env):
    reg = request.getfixturevalue(which)
    env(reg)
    with pytest.raises(ManifestNotFoundError) as exc:
        RegistryClient().resolve(imageref.parse(f"{reg.host}/team/nothing:here"))
    assert exc.value.exit_code == 3 and reg.host in str(exc.value)


@pytest.mark.parametrize("which", ["registry_basic", "registry_token"])
def test_wrong_password(request, which, tmp_path, env):
    reg = request.getfixturevalue(which)
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "config.json").write_text(
        json.dumps({"auths": {f"https://{reg.host}": {"username": "valorch", "password": "wrong"}}})
    )
    env(reg, cfg)
    with pytest.raises(RegistryAuthError) as exc:
        RegistryClient().resolve(imageref.parse(f"{reg.host}/team/tiny:one"))
    assert exc.value.exit_code == 3
    assert (
        "refused" in str(exc.value) and "'valorch'" in str(exc.value) and str(cfg) in str(exc.value)
    )
    assert "docker login" in exc.value.hint


def test_no_credentials_basic(registry_basic, tmp_path, env):  # noqa: F811 (the parameter is the fixture imported above)
    env(registry_basic, tmp_path)
    with pytest.raises(RegistryAuthError, match="needs a login"):
        RegistryClient().resolve(imageref.parse(f"{registry_basic.host}/team/tiny:one"))


def test_auth_field_base64(registry_basic, tiny_images, tmp_path, env):  # noqa: F811 (the parameter is the fixture imported above)
    registry_basic.push(tiny_images[0], "team/tiny:one")
    (tmp_path / "config.json").write_text(
        json.dumps(
            {
                "auths": {
                    registry_basic.host: {
                        "auth": base64.b64encode(b"valorch:s3cret-test-pw").decode()
                    }
                }
            }
        )
    )
    env(registry_basic, tmp_path)
    assert RegistryClient().resolve(imageref.parse(f"{registry_basic.host}/team/tiny:one")).digest


def test_custom_ca_option_and_unknown_ca(registry_basic, tiny_images, monkeypatch):  # noqa: F811 (the parameter is the fixture imported above)
    reg = registry_basic
    reg.push(tiny_images[0], "team/tiny:one")
    monkeypatch.setenv("DOCKER_CONFIG", str(reg.docker_config))
    monkeypatch.setenv("VALORCH_CERTS_D", str(reg.dir / "nowhere"))
    ref = imageref.parse(f"{reg.host}/team/tiny:one")
    # /etc/docker/certs.d has it (the fixture put it there for the engine): hide it via --ca of another CA
    with pytest.raises(InfrastructureError) as exc:
        RegistryClient(ca=str(reg.dir / "signer.crt")).resolve(ref)
    assert "TLS to registry" in str(exc.value) and "--ca" in exc.value.hint
    assert RegistryClient(ca=str(reg.ca)).resolve(ref).digest


def test_unreachable_registry(monkeypatch):
    port = free_port()
    with pytest.raises(InfrastructureError) as exc:
        RegistryClient(timeout=5).resolve(imageref.parse(f"127.0.0.1:{port}/team/x:1"))
    assert (
        exc.value.exit_code == 3
        and f"127.0.0.1:{port}" in str(exc.value)
        and "unreachable" in str(exc.value)
    )
