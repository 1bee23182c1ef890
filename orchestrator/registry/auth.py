"""Where a registry's credentials, CA and endpoint come from, as the Docker client finds them:
``$DOCKER_CONFIG/config.json`` (``auths.<host>.auth`` base64, ``username``/``password``,
``credHelpers``/``credsStore`` helpers), the engine-style ``certs.d/<host>/`` directories,
and the ``WWW-Authenticate`` challenges of the token flow."""

from __future__ import annotations

import base64
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .. import proc, yamlio
from ..errors import InputError

CERTS_DIRS = ("/etc/docker/certs.d", "~/.docker/certs.d")


@dataclass(frozen=True)
class Credentials:
    username: str
    password: str
    source: str  # the file or helper they came from, for messages

    @property
    def identity_token(self) -> bool:
        return self.username == "<token>"


@dataclass(frozen=True)
class Challenge:
    scheme: str  # "bearer" | "basic"
    params: dict[str, str]


def config_path() -> Path:
    base = os.environ.get("DOCKER_CONFIG")
    return (Path(base).expanduser() if base else Path.home() / ".docker") / "config.json"


def _same_registry(key: str, domain: str) -> bool:
    host = re.sub(r"^[a-z]+://", "", key.strip()).split("/", 1)[0]
    if domain == "docker.io":  # Docker Hub's credentials are filed under its legacy index URL
        return host == "docker.io" or host.endswith(".docker.io")
    return host == domain


def credentials(domain: str, path: Path | None = None) -> Credentials | None:
    """The user's credentials for ``domain`` from the Docker config file, or None."""
    path = path or config_path()
    if not path.exists() and not path.is_symlink():
        return None
    text = yamlio.read_text(path, "Docker config file", yamlio.CAPS["yaml"])
    try:
        doc = json.loads(text, parse_int=yamlio.bounded_int)
        problem = "" if isinstance(doc, dict) else "the Docker config is not a JSON object"
    except (ValueError, RecursionError) as exc:
        problem = f"cannot read the Docker config ({exc})"
    if problem:
        raise InputError(
            f"{path}: {problem}",
            "fix the JSON, or point DOCKER_CONFIG at a directory with a valid config.json",
        )
    helper = next(
        (h for k, h in (doc.get("credHelpers") or {}).items() if _same_registry(k, domain)), None
    )
    for key, entry in (doc.get("auths") or {}).items():
        if not _same_registry(key, domain) or not isinstance(entry, dict):
            continue
        if entry.get("auth"):
            try:
                user, _, password = base64.b64decode(entry["auth"]).decode("utf-8").partition(":")
            except (ValueError, UnicodeDecodeError):
                raise InputError(
                    f"{path}: key 'auths.{key}.auth' is not base64 of user:password",
                    f"run docker login {domain} again",
                ) from None
            return Credentials(user, password, str(path))
        if entry.get("username"):
            return Credentials(entry["username"], entry.get("password", ""), str(path))
        if entry.get("identitytoken"):
            return Credentials("<token>", entry["identitytoken"], str(path))
    helper = helper or doc.get("credsStore")
    return _from_helper(helper, domain) if helper else None


def _from_helper(helper: str, domain: str) -> Credentials | None:
    done = proc.call([f"docker-credential-{helper}", "get"], input=domain, timeout=30)
    if not done.ok:
        return None
    try:
        doc = json.loads(done.stdout)
    except ValueError:
        return None
    return Credentials(
        doc.get("Username", ""), doc.get("Secret", ""), f"docker-credential-{helper}"
    )


def tls_files(domain: str, ca: str | None = None) -> tuple[str | bool, tuple[str, str] | None]:
    """(``verify`` for requests, client cert/key) for ``domain``: the ``--ca`` file when given,
    else ``ca.crt`` (or any ``*.crt``) and a ``*.cert``/``*.key`` pair from ``certs.d/<host>/``,
    else the system's CAs."""
    client = None
    for base in os.environ.get("VALORCH_CERTS_D", "").split(os.pathsep) + list(CERTS_DIRS):
        if not base:
            continue
        d = Path(base).expanduser() / domain
        if not d.is_dir():
            continue
        crts = sorted(d.glob("*.crt"))
        cert = next(iter(sorted(d.glob("*.cert"))), None)
        if cert is not None and cert.with_suffix(".key").exists():
            client = (str(cert), str(cert.with_suffix(".key")))
        if ca is None and crts:
            ca = str(d / "ca.crt") if (d / "ca.crt").exists() else str(crts[0])
        break
    if ca is not None and not Path(ca).is_file():
        raise InputError(
            f"--ca {ca}: no such file",
            "pass the PEM file of the CA that signed the registry's certificate",
        )
    return (ca if ca else True), client


def parse_challenge(header: str) -> Challenge | None:
    """``Bearer realm="…",service="…",scope="…"`` (or ``Basic realm="…"``) as data."""
    m = re.match(r"\s*(\w+)\s*(.*)$", header or "", re.S)
    if not m:
        return None
    quoted = {k.lower(): v for k, v in re.findall(r'(\w+)\s*=\s*"([^"]*)"', m.group(2))}
    bare = {k.lower(): v for k, v in re.findall(r'(\w+)\s*=\s*([^",\s]+)', m.group(2))}
    return Challenge(m.group(1).lower(), {**bare, **quoted})
