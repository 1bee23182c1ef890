"""DSSE envelopes signed with the user's key, through securesystemslib (the library in-toto
and python-tuf sign with; docs/attestations.md says why). Keys are PEM files: ECDSA P-256
or Ed25519, private (PKCS#8 or SEC1/"EC PRIVATE KEY", as cosign and openssl write them,
unencrypted or with VALORCH_KEY_PASSWORD) for signing, public (SubjectPublicKeyInfo) for
verifying. Every key problem is an InputError naming the file."""

from __future__ import annotations

import base64
import binascii
import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator import yamlio
from orchestrator.errors import InputError
from orchestrator.ext.attest.intoto import pae

SUPPORTED = "ECDSA P-256 or Ed25519"


@dataclass(frozen=True)
class Checked:
    ok: bool
    reason: str = ""  # why not: "wrong key", "malformed envelope", ...
    payload: bytes = b""


#: a PEM key is a few kB; a larger file is not one
KEY_CAP = 1 << 20


def _read(path: Path, what: str) -> bytes:
    try:
        return yamlio.read_bytes(Path(path), "key file", KEY_CAP)
    except InputError as exc:
        raise InputError(
            f"--key {exc.message}", exc.hint or f"pass the PEM file of the {what}"
        ) from None


def _kind(key: Any) -> str:
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519

    if isinstance(key, (ec.EllipticCurvePrivateKey, ec.EllipticCurvePublicKey)):
        return "ecdsa-p256" if isinstance(key.curve, ec.SECP256R1) else f"ECDSA {key.curve.name}"
    if isinstance(key, (ed25519.Ed25519PrivateKey, ed25519.Ed25519PublicKey)):
        return "ed25519"
    return (
        type(key).__name__.replace("_", "").replace("PrivateKey", "").replace("PublicKey", "")
        or "unknown"
    )


def _supported(path: Path, key: Any) -> Any:
    """``key``, if it is of a type valorch signs with."""
    kind = _kind(key)
    if kind not in ("ecdsa-p256", "ed25519"):
        raise InputError(
            f"--key {path}: unsupported key type {kind}; valorch signs with {SUPPORTED}",
            "make one: openssl genpkey -algorithm ed25519 -out key.pem "
            "(or cosign generate-key-pair for ECDSA P-256)",
        )
    return key


def signer(path: Path) -> Any:
    """A securesystemslib signer for the private key in ``path``."""
    from cryptography.hazmat.primitives.serialization import load_pem_private_key
    from securesystemslib.signer import CryptoSigner

    raw = _read(path, "private key (ECDSA P-256 or Ed25519)")
    password = os.environ.get("VALORCH_KEY_PASSWORD")
    try:
        key = load_pem_private_key(raw, password.encode() if password else None)
    except TypeError:
        raise InputError(
            f"--key {path}: the private key is encrypted",
            "set VALORCH_KEY_PASSWORD to its password",
        ) from None
    except ValueError as exc:
        if b"PUBLIC KEY" in raw:
            raise InputError(
                f"--key {path}: is a public key; signing needs the private key",
                "pass the private key (verify takes the public one)",
            ) from None
        raise InputError(
            f"--key {path}: not a PEM private key the signer can read ({_first(exc)})",
            "pass an unencrypted PKCS#8 or EC PEM key, or set VALORCH_KEY_PASSWORD",
        ) from None
    except Exception as exc:  # noqa: BLE001  (cryptography raises UnsupportedAlgorithm for odd keys)
        raise _unloadable(path, exc) from None
    return CryptoSigner(_supported(path, key))


def public_key(path: Path) -> Any:
    """The securesystemslib key for the public PEM in ``path``. A private key is refused: a
    verifier never needs the signing key, and one copied onto it can sign anything."""
    from cryptography.hazmat.primitives.serialization import load_pem_public_key
    from securesystemslib.signer import SSlibKey

    raw = _read(path, "public key (ECDSA P-256 or Ed25519)")
    if b"PRIVATE KEY" in raw:
        raise InputError(
            f"--key {path}: is a private key; verifying takes the public key, and the "
            "signing key does not belong where attestations are verified",
            f"pass the public key: openssl pkey -in {path} -pubout -out pub.pem",
        )
    try:
        key = load_pem_public_key(raw)
    except ValueError as exc:
        raise InputError(
            f"--key {path}: not a PEM public key ({_first(exc)})",
            "pass the public key: openssl pkey -in key.pem -pubout -out pub.pem",
        ) from None
    except Exception as exc:  # noqa: BLE001 (any other failure to load a key is the key's fault)
        raise _unloadable(path, exc) from None
    return SSlibKey.from_crypto(_supported(path, key))


def sign(body: bytes, payload_type: str, key_signer: Any) -> dict[str, Any]:
    """A DSSE envelope over ``body``: ``{"payloadType", "payload", "signatures": [{"keyid", "sig"}]}``."""
    sig = key_signer.sign(pae(payload_type, body))
    return {
        "payloadType": payload_type,
        "payload": base64.b64encode(body).decode(),
        "signatures": [
            {"keyid": sig.keyid, "sig": base64.b64encode(bytes.fromhex(sig.signature)).decode()}
        ],
    }


def check(envelope: Mapping[str, Any], key: Any) -> Checked:
    """Whether one of the envelope's signatures verifies with ``key`` over DSSE's PAE. The
    signature's keyid is not required to match (cosign writes an empty one)."""
    from securesystemslib.exceptions import UnverifiedSignatureError, VerificationError
    from securesystemslib.signer import Signature

    env = copy.deepcopy(dict(envelope)) if isinstance(envelope, Mapping) else {}
    try:
        body = base64.b64decode(env["payload"], validate=True)
        kind = env["payloadType"]
        sigs = [base64.b64decode(s["sig"], validate=True) for s in env["signatures"]]
        ids = [str(s.get("keyid") or "") for s in env["signatures"]]
        if not isinstance(kind, str) or not sigs:
            raise ValueError("no signatures")
    except (KeyError, TypeError, ValueError, binascii.Error):
        return Checked(
            False, "malformed envelope (payload, payloadType or signatures missing or not base64)"
        )
    data = pae(kind, body)
    for raw in sigs:
        try:
            key.verify_signature(Signature(key.keyid, raw.hex()), data)
            return Checked(True, "", body)
        except (UnverifiedSignatureError, VerificationError):
            continue
    if key.keyid in ids:  # signed by this key, and the bytes no longer match
        why = (
            "tampered: the payload was changed after it was signed (the signature is this "
            "key's, over other bytes)"
        )
    elif any(ids):
        why = f"wrong key: signed by key {ids[0][:16]}…, not by {key.keyid[:16]}…"
    else:
        why = "signature does not verify with this key (wrong key, or the payload was changed)"
    return Checked(False, why, body)


def _unloadable(path: Path, exc: Exception) -> InputError:
    return InputError(
        f"--key {path}: cannot load the key ({_first(exc)})", f"use an {SUPPORTED} key"
    )


def _first(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__
