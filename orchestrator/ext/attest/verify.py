"""valorch verify: does the newest signed attestation on the digest an image reference
resolves to hold a requirement? The digest is resolved in the registry, the attestations
attached to it fetched (referrers API and cosign's ``.att`` tag) and decoded (signature with
the given public key over DSSE's PAE, then the signed statement), and ``policy.decide``
makes the one decision (docs/attestations.md, "How verify decides"): exit 0 when the newest
attestation of the type the requirement reads holds it, 1 otherwise, with every
attestation's role and reason."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from orchestrator import imageref, netbody
from orchestrator.errors import InputError
from orchestrator.ext.attest import artifacts, policy, signing
from orchestrator.registry import RegistryClient

REQUIREMENTS = "qualified, passed (every check passed) or passed:CHECK-GLOB"


def parse_requirement(text: str | None) -> tuple[str, str]:
    """("qualified", "") | ("passed", GLOB); GLOB "" means every check."""
    if not text or text == "passed":
        return "passed", ""
    if text == "qualified":
        return "qualified", ""
    kind, sep, glob = text.partition(":")
    if kind == "passed" and sep and glob.strip():
        return "passed", glob.strip()
    raise InputError(f"--require {text}: not a requirement valorch knows", f"use {REQUIREMENTS}")


def parse_age(text: str | None) -> timedelta | None:
    """``30d``, ``12h``, ``90m``, ``3600s`` (or plain seconds)."""
    if not text:
        return None
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    num, unit = (text[:-1], text[-1]) if text[-1:] in units else (text, "s")
    try:
        value = float(num)
    except ValueError:
        value = -1
    if not value > 0:
        raise InputError(f"--max-age {text}: not a duration", "write e.g. 30d, 12h or 3600s")
    if not value * units[unit] <= MAX_AGE_S:  # timedelta holds 999999999 days; nan, inf
        raise InputError(
            f"--max-age {text}: longer than any attestation can be (at most 36500d)",
            "write e.g. 30d, 12h or 3600s",
        )
    return timedelta(seconds=value * units[unit])


#: the longest --max-age: a century (``timedelta`` overflows past 999999999 days)
MAX_AGE_S = 100 * 365 * 86400


def decode(found: list[tuple[str, bytes]], pub: object) -> list[policy.Decoded]:
    """Each fetched envelope checked with the key and its signed statement decoded (an
    envelope that is not JSON, or whose signature does not verify, carries its problem)."""
    out = []
    for where, raw in found:
        try:  # bounded: a registry's body is capped and its depth counted before parsing
            envelope = netbody.loads(raw, netbody.ATTESTATION)
        except ValueError as exc:
            why = "not JSON" if type(exc) is json.JSONDecodeError else str(exc)
            out.append(policy.Decoded(where, problem=f"malformed envelope ({why})"))
            continue
        checked = signing.check(envelope, pub)
        if not checked.ok:
            out.append(policy.Decoded(where, problem=checked.reason))
            continue
        try:
            statement = netbody.loads(checked.payload, netbody.ATTESTATION)
        except ValueError:
            out.append(policy.Decoded(where, problem="the signed payload is not JSON"))
            continue
        out.append(policy.Decoded(where, statement, checked.payload))
    return out


def verify(
    image: str,
    key: Path,
    *,
    require: str | None = None,
    max_age: str | None = None,
    allow_imported: bool = False,
) -> policy.Decision:
    requirement = parse_requirement(require)
    age = parse_age(max_age)
    pub = signing.public_key(key)  # bad input first: exit 2 before the network
    ref = imageref.parse(image)
    client = RegistryClient()
    digest = client.resolve(ref).digest
    found, looked = artifacts.fetch(client, ref, digest)
    if not found:
        raise NotAttestedError(
            f"{ref} ({digest}) has no attestations (looked at the {looked})",
            "attest and push it: valorch attest --run RUN --key key.pem --push",
        )
    return policy.decide(
        decode(found, pub),
        image=str(ref),
        digest=digest,
        requirement=requirement,
        require=require or "passed",
        looked=looked,
        max_age=age,
        now=datetime.now(timezone.utc),
        allow_imported=allow_imported,
    )


class NotAttestedError(InputError):
    """verify of an image with no attestation at all: bad input (exit 2), not a failed check."""
