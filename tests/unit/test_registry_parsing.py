import base64
import json

import pytest

from orchestrator.errors import InputError
from orchestrator.registry import auth, insecure
from orchestrator.registry.client import rate_limit


def test_bearer_challenge():
    c = auth.parse_challenge(
        'Bearer realm="https://auth.example/token",service="registry.example",'
        'scope="repository:rocm/pytorch:pull"'
    )
    assert c.scheme == "bearer"
    assert c.params == {
        "realm": "https://auth.example/token",
        "service": "registry.example",
        "scope": "repository:rocm/pytorch:pull",
    }
    assert auth.parse_challenge('Basic realm="Registry Realm"').scheme == "basic"
    assert auth.parse_challenge("") is None


def test_rate_limit_headers():
    limit = rate_limit(
        {
            "ratelimit-limit": "100;w=21600",
            "ratelimit-remaining": "76;w=21600",
            "docker-ratelimit-source": "203.0.113.7",
        }
    )
    assert (limit.limit, limit.remaining, limit.window_s) == (100, 76, 21600)
    assert str(limit) == "76/100 pulls left per 6 h"
    assert rate_limit({}) is None


def test_credentials_from_config(tmp_path, monkeypatch):
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path))
    (tmp_path / "config.json").write_text(
        json.dumps(
            {
                "auths": {
                    "docker.io": {"auth": base64.b64encode(b"hubuser:pw:with:colons").decode()},
                    "registry.example:5000": {"username": "u", "password": "p"},
                    "https://other.example/": {"identitytoken": "tok"},
                }
            }
        )
    )
    hub = auth.credentials("docker.io")
    assert (hub.username, hub.password) == ("hubuser", "pw:with:colons")
    assert auth.credentials("registry.example:5000").password == "p"
    assert auth.credentials("other.example").identity_token
    assert auth.credentials("unknown.example") is None
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(InputError, match=r"config\.json"):
        auth.credentials("docker.io")


def test_certs_d_and_endpoint(tmp_path, monkeypatch):
    d = tmp_path / "127.0.0.1:5000"
    d.mkdir()
    (d / "ca.crt").write_text("x")
    (d / "client.cert").write_text("x")
    (d / "client.key").write_text("x")
    monkeypatch.setenv("VALORCH_CERTS_D", str(tmp_path))
    verify, cert = auth.tls_files("127.0.0.1:5000")
    assert verify == str(d / "ca.crt") and cert == (str(d / "client.cert"), str(d / "client.key"))
    assert auth.tls_files("nowhere.example:1") == (True, None)
    with pytest.raises(InputError, match="no such file"):
        auth.tls_files("nowhere.example:1", ca=str(tmp_path / "missing.pem"))
    monkeypatch.setenv(
        "VALORCH_REGISTRY_ENDPOINTS", "docker.io=https://mirror.example:5000/,x=http://127.0.0.1:1"
    )
    assert insecure.endpoints("docker.io")[0] == "https://mirror.example:5000"
    assert (
        insecure.endpoints("x")[0] == "http://127.0.0.1:1"
        and insecure.endpoints("y.example")[0] == "https://y.example"
    )
