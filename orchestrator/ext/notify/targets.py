"""``--notify slack=URL`` / ``--notify github=OWNER/REPO``: parsed and checked before any work."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from orchestrator import encode
from orchestrator.errors import InputError

GITHUB_API = "https://api.github.com"  # GITHUB_API_URL overrides it (GitHub Enterprise, tests)
TOKEN_VARS = ("VALORCH_GITHUB_TOKEN", "GITHUB_TOKEN")
SHA_VARS = ("VALORCH_GITHUB_SHA", "GITHUB_SHA")


@dataclass(frozen=True)
class Target:
    kind: str  # slack | github
    url: str  # where to POST
    repo: str = ""
    token: str = ""  # never printed
    sha: str = ""

    @property
    def shown(self) -> str:
        """What a log line may say about the target: no token, no webhook path (it is the secret)."""
        return f"github {self.repo}" if self.kind == "github" else f"slack {origin(self.url)}/…"


LOOPBACK = ("127.0.0.1", "::1", "localhost")


def origin(url: str) -> str:
    """scheme://host[:port] of ``url``, without credentials: what a message may name."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    host = parts.hostname or ""
    return f"{parts.scheme}://{f'[{host}]' if ':' in host else host}{f':{port}' if port else ''}"


def _http_url(value: str, what: str) -> str:
    parts = urlsplit(value)
    try:
        _ = parts.port  # reading it raises ValueError for a port that is not a number
    except ValueError:
        parts = parts._replace(netloc="")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(
            f"{what} '{encode.url(value)[:60]}' is not an http(s) URL",
            "write --notify slack=https://hooks.example/… (the webhook URL your chat gives)",
        )
    return value


def parse(values: Sequence[str], env: Mapping[str, str] | None = None) -> tuple[Target, ...]:
    env = os.environ if env is None else env
    out = []
    for value in values or ():
        kind, sep, rest = value.partition("=")
        if not sep or not rest:
            raise InputError(
                f"--notify '{value[:60]}' is not KIND=WHERE", "use slack=URL or github=OWNER/REPO"
            )
        if kind == "slack":
            out.append(Target("slack", _http_url(rest, "--notify slack=")))
        elif kind == "github":
            if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", rest):
                raise InputError(
                    f"--notify github={rest[:60]}: not OWNER/REPO",
                    "e.g. --notify github=acme/stack",
                )
            token = next((env[v] for v in TOKEN_VARS if env.get(v)), "")
            if not token:
                raise InputError(
                    "--notify github needs a token in GITHUB_TOKEN (or VALORCH_GITHUB_TOKEN)",
                    "export a token that may write checks to " + rest,
                )
            sha = next((env[v] for v in SHA_VARS if env.get(v)), "")
            if not re.fullmatch(r"[0-9a-f]{40}", sha):
                raise InputError(
                    "--notify github needs the commit to attach the check to: GITHUB_SHA "
                    "(or VALORCH_GITHUB_SHA) with a 40-hex commit id",
                    "GitHub Actions sets GITHUB_SHA; elsewhere export it",
                )
            api = _http_url(env.get("GITHUB_API_URL") or GITHUB_API, "GITHUB_API_URL").rstrip("/")
            if urlsplit(api).scheme != "https" and urlsplit(api).hostname not in LOOPBACK:
                raise InputError(
                    f"GITHUB_API_URL {origin(api)} is not https: the token would travel in clear text",
                    "use the https:// address of the GitHub API (http is allowed for 127.0.0.1 only)",
                )
            out.append(Target("github", f"{api}/repos/{rest}/check-runs", rest, token, sha))
        else:
            raise InputError(
                f"--notify {kind}=…: unknown kind '{kind}'", "use slack=URL or github=OWNER/REPO"
            )
    return tuple(out)
