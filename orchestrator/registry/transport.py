"""A registry request's faults below HTTP, named for what they are (exit 3, naming the
registry), and its total deadline."""

from __future__ import annotations

from collections.abc import Callable

import requests

from .. import encode, netbody
from ..errors import InfrastructureError

_WHAT: dict[type[Exception], str] = {
    requests.exceptions.TooManyRedirects: "redirects in a loop",
    requests.exceptions.ChunkedEncodingError: "sent a broken chunked response",
    requests.exceptions.ContentDecodingError: "sent a body that does not decompress",
    requests.exceptions.MissingSchema: "sent a URL without http(s)://",
    requests.exceptions.InvalidSchema: "sent a URL that is not http(s)",
    requests.exceptions.InvalidURL: "sent a URL that does not parse",
}


def error(
    exc: requests.exceptions.RequestException, domain: str, url: str, who: str = ""
) -> InfrastructureError:
    """A registry's fault below HTTP (exit 3, never "check the path you passed"): a realm or
    Location that is no URL, a redirect loop, a broken chunked or compressed body."""
    why = next((w for t, w in _WHAT.items() if isinstance(exc, t)), type(exc).__name__)
    if "IncompleteRead" in str(exc):  # the connection ended before the Content-Length it sent
        why = "sent a body shorter than its Content-Length (cut off)"
    detail = " ".join(str(exc).split())[:200]
    return InfrastructureError(
        f"{who}registry {domain} {why} ({encode.url(url)[:200]}): {detail}",
        "the registry (or a proxy before it) is misbehaving: check its health, or report it "
        "to whoever runs it",
    )


def within(
    deadline: float, domain: str, url: str, call: Callable[[], requests.Response]
) -> requests.Response:
    """``call()`` (one request, its body read), or exit 3 when it is not done within
    ``deadline`` seconds (``netbody.within`` says why)."""
    try:
        return netbody.within(deadline, call, f"registry {domain}")
    except netbody.DeadlineError:
        raise InfrastructureError(
            f"registry {domain} did not answer {encode.url(url.split('?')[0])} within "
            f"{deadline:g} s (it sends too slowly or stalls)",
            "check the registry's health and the network (or run with --pull never when the "
            "images are already on the engine)",
        ) from None


def too_large(
    exc: ValueError, domain: str, url: str, what: str, who: str = ""
) -> InfrastructureError:
    """A body over its cap or JSON nested past the limit (netbody): the registry's fault,
    exit 3, naming the registry, what was read and the cap."""
    return InfrastructureError(
        f"{who}registry {domain} sent a {what} that valorch does not read "
        f"({encode.url(url.split('?')[0])[:200]}): {exc}",
        "the registry (or a proxy before it) is misbehaving or hostile: check what it serves "
        "there, or report it to whoever runs it (docs/registries.md lists the caps)",
    )
