"""What valorch reads from a network (a registry, a webhook, an engine's container output) is
bounded: a size cap per body, a nesting limit on its JSON, and a total deadline per request.

A per-read timeout alone lets a server that sends one byte per read hold valorch forever, a
body read whole lets an endless one fill the memory, and the standard library's JSON parser
recurses once per level (an endless ``[[[[…`` ends in a ``RecursionError``). Each cap here
is a clear error for the caller to name (exit 3 where the server is at fault); the numbers
are in docs/registries.md, "What valorch reads from a registry"."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from .bounds import INT64_MAX, INT64_MIN, MAX_INT_LITERAL

KIB, MIB = 1024, 1024 * 1024

#: an image manifest or index (and a referrers index): containerd reads at most 4 MiB of a
#: manifest (``remotes/docker``'s ``MaxManifestSize``), and registries that accept pushes cap
#: them near there (the distribution spec asks for at least 4 MiB)
MANIFEST = 4 * MIB
#: an attestation layer valorch reads back (a DSSE envelope of one run's results)
ATTESTATION = 16 * MIB
#: a token service's answer (a JWT and a few fields: some KiB)
TOKEN = 1 * MIB
#: any other body: an error page, the answer to a push, a webhook's reply (only shown cut)
SMALL = 64 * KIB
#: a detection container's report on an engine (kfd nodes, nvidia-smi's text)
ENGINE_REPORT = 4 * MIB
#: nesting of any JSON valorch parses from outside: OCI manifests and in-toto statements
#: are a handful of levels deep
DEPTH = 64

CHUNK = 64 * KIB

T = TypeVar("T")


class TooLargeError(ValueError):
    """A body over its cap (a ``ValueError``: callers that refuse bad JSON refuse it too)."""


class TooDeepError(ValueError):
    """JSON nested deeper than ``DEPTH`` (checked before it is parsed)."""


class DeadlineError(Exception):
    """A request (headers and body) not done within its total deadline."""


def size(n: int) -> str:
    """``4 MiB``, ``64 KiB``, ``123 bytes``."""
    if n >= MIB and n % MIB == 0:
        return f"{n // MIB} MiB"
    if n >= KIB and n % KIB == 0:
        return f"{n // KIB} KiB"
    return f"{n} bytes"


# a JSON string (escapes included) or a bracket: strings are skipped whole, so a bracket
# inside one is not counted
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)


def depth(data: bytes | str, limit: int = DEPTH) -> int:
    """How deep ``data``'s brackets nest, counted up to ``limit + 1`` (the scan stops there:
    an endless ``[[[[…`` costs ``limit`` steps, not its length)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    level = deepest = 0
    for m in _TOKENS.finditer(raw):
        c = m.group()
        if c in (b"[", b"{"):
            level += 1
            if level > deepest:
                deepest = level
                if deepest > limit:
                    break
        elif c in (b"]", b"}"):
            level -= 1
    return deepest


def _int(text: str) -> int:
    if len(text) > MAX_INT_LITERAL or not INT64_MIN <= (value := int(text)) <= INT64_MAX:
        raise ValueError(f"integer {text[:24]} is larger than 64 bits")
    return value


def loads(data: bytes | str, cap: int = MANIFEST, limit: int = DEPTH, int64: bool = True) -> Any:
    """``json.loads`` of a body from outside, without recursion past ``limit`` levels and
    (``int64``) without an integer past 64 bits: ``TooLargeError``, ``TooDeepError`` or
    another ``ValueError`` (not JSON)."""
    if len(data) > cap:
        raise TooLargeError(f"{size(len(data))}, more than the {size(cap)} valorch reads")
    if depth(data, limit) > limit:
        raise TooDeepError(f"JSON nested deeper than {limit} levels")
    return json.loads(data, parse_int=_int if int64 else None)


def read(resp: Any, cap: int, deadline_at: float | None = None, cut: bool = False) -> bytes:
    """The body of a streamed ``requests`` response, at most ``cap`` bytes (``TooLargeError``
    past it, the connection closed; with ``cut``, its first ``cap`` bytes instead: an error
    page is only shown in part) and read by ``deadline_at`` (``time.monotonic()``;
    ``DeadlineError`` past it). A Content-Length over the cap is refused before reading."""
    declared = resp.headers.get("content-length")
    if not cut and declared and declared.strip().isdigit() and int(declared) > cap:
        resp.close()
        raise TooLargeError(
            f"{size(int(declared))} declared, more than the {size(cap)} valorch reads"
        )
    got = bytearray()
    try:
        for chunk in resp.iter_content(CHUNK):
            got += chunk
            if len(got) > cap:
                if cut:
                    del got[cap:]
                    resp.close()
                    break
                raise TooLargeError(f"more than the {size(cap)} valorch reads")
            if deadline_at is not None and time.monotonic() > deadline_at:
                raise DeadlineError("the body was still arriving at the deadline")
    except BaseException:
        resp.close()
        raise
    body = bytes(got)
    resp._content = body  # what requests' ``content``, ``text`` and ``json()`` return
    resp._content_consumed = True
    return body


def within(deadline: float, call: Callable[[], T], name: str = "request") -> T:
    """``call()`` or ``DeadlineError`` when it is not done within ``deadline`` seconds (a
    server that sends its headers a byte at a time is not stopped by a per-read timeout).
    The abandoned call runs on in a daemon thread; ``read`` ends its body at the deadline."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below
            box["exc"] = exc

    worker = threading.Thread(target=run, daemon=True, name=name)
    worker.start()
    worker.join(deadline)
    if worker.is_alive():
        raise DeadlineError(f"not done within {deadline:g} s")
    if "exc" in box:
        raise box["exc"]
    value: T = box["value"]
    return value
