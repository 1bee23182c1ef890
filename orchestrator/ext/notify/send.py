"""POST a notification (``requests``): retried on 5xx and connection errors, and no
secret in what is printed (the webhook path and the token stay out of every message)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any
from urllib.parse import urljoin

import requests

from orchestrator import __version__, netbody
from orchestrator.errors import InfrastructureError
from orchestrator.ext.notify import message
from orchestrator.ext.notify.targets import Target, origin

TRIES = 3
BACKOFF_S = 0.5


MAX_REDIRECTS = 3
#: one POST's whole time (its answer read, at most netbody.SMALL of it): a per-read timeout
#: alone lets a server that answers a byte at a time hold the command
DEADLINE_S = 30.0


class _RedirectedError(Exception):
    pass


def _post_same_host(url: str, body: dict[str, Any], headers: dict[str, str]) -> requests.Response:
    """POST, following a redirect only to the same scheme, host and port: a redirect that
    leaves the host would carry the body (a webhook's message) and the token elsewhere,
    while the log named the first host."""
    for _ in range(MAX_REDIRECTS + 1):
        resp = netbody.within(DEADLINE_S, partial(_post_once, url, body, headers), "notify")
        if resp.status_code not in (301, 302, 303, 307, 308) or "Location" not in resp.headers:
            return resp
        nxt = urljoin(url, resp.headers["Location"])
        if origin(nxt) != origin(url):
            raise _RedirectedError(
                f"HTTP {resp.status_code} redirect to {origin(nxt)} not followed "
                "(it leaves the host; the message and the token stay here)"
            )
        url = nxt
    raise _RedirectedError(f"more than {MAX_REDIRECTS} redirects")


def _post_once(url: str, body: dict[str, Any], headers: dict[str, str]) -> requests.Response:
    until = time.monotonic() + DEADLINE_S
    resp = requests.post(
        url, json=body, headers=headers, timeout=20, allow_redirects=False, stream=True
    )
    netbody.read(resp, netbody.SMALL, until, cut=True)  # only its status is used
    return resp


def _post(target: Target, body: dict[str, Any], tries: int = TRIES) -> int:
    headers = {"User-Agent": f"valorch/{__version__}", "Content-Type": "application/json"}
    if target.kind == "github":
        headers.update(
            {
                "Authorization": f"Bearer {target.token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
            }
        )
    problem = ""
    for attempt in range(1, tries + 1):
        try:
            resp = _post_same_host(target.url, body, headers)
        except requests.RequestException as exc:
            problem = type(exc).__name__  # the text of a connection error names the URL
        except netbody.DeadlineError:
            problem = f"no answer within {DEADLINE_S:g} s"
        except _RedirectedError as exc:  # never followed: the body and a token stay here
            problem = str(exc)
            break
        else:
            if resp.status_code < 300:
                return resp.status_code
            problem = f"HTTP {resp.status_code}"
            if resp.status_code < 500:  # a client error does not get better by asking again
                break
        if attempt < tries:
            time.sleep(BACKOFF_S * 2 ** (attempt - 1))
    raise InfrastructureError(
        f"notification to {target.shown} failed: {problem} after {attempt} attempt(s)",
        "check the webhook URL or the token's permissions (checks: write)",
    )


def send(
    targets: Sequence[Target], outcome: message.Outcome, say: Callable[[str], None] = print
) -> list[str]:
    """Post to every target; returns the failures (each already said), so that one
    unreachable target does not hide the others."""
    failures = []
    for t in targets:
        body = message.slack(outcome) if t.kind == "slack" else message.github(outcome, t.sha)
        try:
            status = _post(t, body)
            say(f"notified {t.shown}: {outcome.conclusion} (HTTP {status})")
        except InfrastructureError as exc:
            say(f"error: {exc.message}")
            failures.append(exc.message)
    return failures
