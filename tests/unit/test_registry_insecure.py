"""registry.insecure: the engine's rule for plain-HTTP registries, from its RegistryConfig."""

from orchestrator.registry import insecure

ENGINE = {
    "IndexConfigs": {
        "docker.io": {"Name": "docker.io", "Secure": True},
        "build-cache.lan:5000": {"Name": "build-cache.lan:5000", "Secure": False},
    },
    "InsecureRegistryCIDRs": ["127.0.0.0/8", "10.20.0.0/16"],
}


def test_loopback_needs_no_engine():
    for domain in ("127.0.0.1:5000", "127.1.2.3:80", "localhost:5000", "[::1]:5000"):
        assert insecure.plain_http_allowed(domain, {}), domain


def test_engine_insecure_names_and_cidrs():
    assert insecure.plain_http_allowed("build-cache.lan:5000", ENGINE)
    assert not insecure.plain_http_allowed("build-cache.lan:5001", ENGINE)  # the name with its port
    assert insecure.plain_http_allowed("10.20.3.4:5000", ENGINE)
    assert not insecure.plain_http_allowed("10.21.3.4:5000", ENGINE)
    assert not insecure.plain_http_allowed("docker.io", ENGINE)
    assert not insecure.plain_http_allowed(
        "registry.example:443", {"InsecureRegistryCIDRs": ["bogus"]}
    )


def test_endpoints_order_and_override(monkeypatch):
    monkeypatch.setenv("VALORCH_REGISTRY_ENDPOINTS", "mirror.example=https://m.example:8443/")
    assert insecure.endpoints("mirror.example") == ("https://m.example:8443",)
    assert insecure.endpoints("127.0.0.1:5000") == (
        "https://127.0.0.1:5000",
        "http://127.0.0.1:5000",
    )
    hint = insecure.tls_hint("10.0.0.5:5000")
    assert (
        "insecure-registries" in hint
        and "VALORCH_REGISTRY_ENDPOINTS=10.0.0.5:5000=http://10.0.0.5:5000" in hint
    )
