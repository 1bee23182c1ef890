"""A registry request's faults below HTTP, named for what they are (exit 3, naming the
registry), and its total deadline."""

from __future__ import annotations

import threading
from collections.abc import Callable

import requests

from .. import encode
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
    ``deadline`` seconds: a per-read timeout alone lets a registry that trickles a byte at
    a time hold valorch forever. The abandoned request's thread is a daemon."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["resp"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below
            box["exc"] = exc

    worker = threading.Thread(target=run, daemon=True, name=f"registry {domain}")
    worker.start()
    worker.join(deadline)
    if worker.is_alive():
        raise InfrastructureError(
            f"registry {domain} did not answer {encode.url(url.split('?')[0])} within "
            f"{deadline:g} s (it sends too slowly or stalls)",
            "check the registry's health and the network (or run with --pull never when the "
            "images are already on the engine)",
        )
    if "exc" in box:
        raise box["exc"]  # type: ignore[misc]
    resp = box["resp"]
    assert isinstance(resp, requests.Response)
    return resp
