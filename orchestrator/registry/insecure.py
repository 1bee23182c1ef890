"""Which registries may be spoken to over plain HTTP, as the Docker engine decides it.

The engine treats a registry as *insecure* (HTTPS first, plain HTTP when that fails) when
its address is in one of the engine's ``InsecureRegistryCIDRs`` (127.0.0.0/8 by default:
a registry on loopback needs no configuration) or its name is one of the engine's
``insecure-registries`` (``IndexConfigs.<name>.Secure`` false in ``docker info``). valorch
reads the same ``docker info`` and follows the same rule, so a registry the engine pushes
to is one valorch can check. An explicit ``VALORCH_REGISTRY_ENDPOINTS`` mapping wins.

The engine's *official* index (the default domain of a reference written without one) is
served by the engine from another host than its name: valorch asks the engine for that
too, as ``docker pull`` resolves it, the engine's registry mirrors for it first, then the
host of the engine's ``IndexServerAddress``. No registry's address is written in valorch.
"""

from __future__ import annotations

import ipaddress
import os
import threading
from typing import Any

from .. import netbody, proc

#: the engine's default InsecureRegistryCIDRs, used when ``docker info`` cannot be read
LOOPBACK = ("127.0.0.0/8", "::1/128")

_lock = threading.Lock()
_engine: dict[str, Any] | None = None


def engine_registry_config() -> dict[str, Any]:
    """``docker info``'s ``RegistryConfig`` of the engine the docker CLI talks to (DOCKER_HOST,
    its context), read once per process; {} when there is no CLI or no engine."""
    global _engine
    with _lock:
        if _engine is None:
            done = proc.call(["docker", "info", "--format", _INFO], timeout=20)
            try:
                found = netbody.loads(done.stdout, netbody.ENGINE_REPORT) if done.ok else {}
            except ValueError:
                found = {}
            config = found.get("registry") if isinstance(found, dict) else None
            _engine = dict(config) if isinstance(config, dict) else {}
            index = found.get("index") if isinstance(found, dict) else None
            if isinstance(index, str) and _engine:
                _engine["IndexServerAddress"] = index
        return _engine


#: the engine's registry configuration and the address of its official index, as one JSON
_INFO = '{"registry": {{json .RegistryConfig}}, "index": {{json .IndexServerAddress}}}'


def _host(domain: str) -> str:
    """``127.0.0.1:5000`` → ``127.0.0.1``; ``[::1]:5000`` → ``::1``; ``reg.example`` as is."""
    if domain.startswith("["):
        return domain[1:].split("]", 1)[0]
    return domain.rsplit(":", 1)[0] if domain.count(":") == 1 else domain


def _address(domain: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    host = _host(domain)
    try:
        return ipaddress.ip_address("127.0.0.1" if host == "localhost" else host)
    except ValueError:
        return None


def _within(address: Any, cidrs: Any) -> bool:
    for cidr in cidrs:
        try:
            if address in ipaddress.ip_network(str(cidr), strict=False):
                return True
        except ValueError:
            continue
    return False


def plain_http_allowed(domain: str, config: dict[str, Any] | None = None) -> bool:
    """True when the engine would fall back to plain HTTP for ``domain`` (``host[:port]``):
    loopback (asks nothing), else the engine's insecure CIDRs and insecure registry names."""
    address = _address(domain)
    if address is not None and _within(address, LOOPBACK):
        return True
    config = engine_registry_config() if config is None else config
    index = (config.get("IndexConfigs") or {}).get(domain)
    if isinstance(index, dict) and index.get("Secure") is False:
        return True
    return address is not None and _within(address, config.get("InsecureRegistryCIDRs") or ())


def endpoints(domain: str) -> tuple[str, ...]:
    """The base URLs to try for ``domain``'s API, in order (an explicit mapping alone: the
    ``VALORCH_REGISTRY_ENDPOINTS`` variable is ``domain=URL,…``)."""
    for item in os.environ.get("VALORCH_REGISTRY_ENDPOINTS", "").split(","):
        name, sep, url = item.strip().partition("=")
        if sep and name == domain:
            return (url.rstrip("/"),)
    official = official_endpoints(domain)
    if official:
        return official
    if plain_http_allowed(domain):
        return (f"https://{domain}", f"http://{domain}")
    return (f"https://{domain}",)


def official_endpoints(domain: str, config: dict[str, Any] | None = None) -> tuple[str, ...]:
    """Where the engine itself reaches ``domain`` when it is the engine's official index
    (``IndexConfigs.<domain>.Official``): its registry mirrors for that index (or the
    engine-wide ``Mirrors``), then the scheme and host of its ``IndexServerAddress``; () for
    any other registry, or when the engine cannot be asked."""
    config = engine_registry_config() if config is None else config
    index = (config.get("IndexConfigs") or {}).get(domain)
    if not (isinstance(index, dict) and index.get("Official") is True):
        return ()
    mirrors = index.get("Mirrors") or config.get("Mirrors")
    listed = mirrors if isinstance(mirrors, list) else []
    found = [m.rstrip("/") for m in listed if isinstance(m, str) and _http_url(m)]
    address = config.get("IndexServerAddress")
    if isinstance(address, str) and _http_url(address):
        scheme, _, rest = address.partition("://")
        found.append(f"{scheme}://{rest.split('/', 1)[0]}")
    return tuple(dict.fromkeys(found))


def _http_url(text: str) -> bool:
    scheme, sep, rest = text.partition("://")
    return bool(sep) and scheme in ("http", "https") and bool(rest.split("/", 1)[0])


def tls_hint(domain: str) -> str:
    """What to do when TLS to ``domain`` failed because it speaks plain HTTP."""
    return (
        f'the registry at {domain} speaks plain HTTP: add "{domain}" to "insecure-registries" in the '
        "engine's /etc/docker/daemon.json (and restart dockerd), as the engine itself needs for a push or "
        f"pull; or map it explicitly: VALORCH_REGISTRY_ENDPOINTS={domain}=http://{domain}"
    )
