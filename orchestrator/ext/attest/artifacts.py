"""Attestations attached to an image in its registry, as OCI artifacts.

Two ways, as cosign and oras do it:
- the OCI 1.1 **referrers API** (``GET /v2/<repo>/referrers/<digest>`` answers an image
  index): one artifact manifest per attestation whose ``subject`` is the image and whose
  ``artifactType`` is the DSSE envelope type;
- the **tag scheme** where the registry has no referrers API (distribution 2.8):
  ``sha256-<hex>.att`` names one manifest whose layers are the DSSE envelopes
  (``application/vnd.dsse.envelope.v1+json``), appended to on each push, as
  ``cosign attest`` writes them and ``cosign verify-attestation`` reads them.

Blobs go up first and the manifest last, so a failed push leaves no manifest that names
a missing blob (nothing is attached half-way)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from orchestrator import netbody
from orchestrator.errors import InfrastructureError
from orchestrator.imageref import ImageRef
from orchestrator.registry import insecure, transport
from orchestrator.registry.client import (
    OCI_INDEX,
    OCI_MANIFEST,
    ManifestNotFoundError,
    RegistryClient,
    sha256_of,
)

DSSE = "application/vnd.dsse.envelope.v1+json"
EMPTY = "application/vnd.oci.empty.v1+json"
COSIGN_CONFIG = "application/vnd.oci.image.config.v1+json"
PREDICATE_ANNOTATION = "predicateType"  # the layer annotation cosign writes and reads
# cosign refuses an attestation layer without this annotation ("is missing
# dev.cosignproject.cosign/signature"): for a DSSE layer it is empty, the signature being
# inside the envelope.
SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature"


@dataclass(frozen=True)
class Pushed:
    mode: str  # "referrers" | "tag"
    where: str  # repo@digest of the artifact manifest, or repo:sha256-<hex>.att
    manifest_digest: str


def att_tag(digest: str) -> str:
    """cosign's tag for the attestations of ``digest``: ``sha256-<hex>.att``."""
    return digest.replace(":", "-") + ".att"


def _desc(media: str, data: bytes, ptype: str = "") -> dict[str, Any]:
    """A descriptor; a DSSE layer's (``ptype`` given) with the annotations cosign reads."""
    d: dict[str, Any] = {"mediaType": media, "digest": sha256_of(data), "size": len(data)}
    if ptype:
        d["annotations"] = {SIGNATURE_ANNOTATION: "", PREDICATE_ANNOTATION: ptype}
    return d


def referrers(client: RegistryClient, ref: ImageRef, digest: str) -> list[Any] | None:
    """The manifests of the referrers index for ``digest`` (an empty one counts); None where
    the registry does not serve the referrers API for ``ref``'s repository."""
    try:
        resp = client.send("GET", ref, f"referrers/{digest}", headers={"Accept": OCI_INDEX})
    except ManifestNotFoundError:
        return None
    except InfrastructureError as exc:
        if "HTTP 4" in exc.message:  # 400/405: an older registry that does not know the route
            return None
        raise
    ctype = resp.headers.get("content-type", "").split(";")[0].strip()
    try:
        doc = _index(resp, ref)
    except ValueError:
        return None
    manifests = doc.get("manifests") if isinstance(doc, dict) else None
    return manifests if ctype == OCI_INDEX and isinstance(manifests, list) else None


def push_blob(client: RegistryClient, ref: ImageRef, data: bytes) -> str:
    digest = sha256_of(data)
    try:
        client.send("HEAD", ref, f"blobs/{digest}")
        return digest  # already there
    except ManifestNotFoundError:
        pass
    start = client.send("POST", ref, "blobs/uploads/", push=True, body=b"")
    location = start.headers.get("location")
    if not location:
        raise InfrastructureError(
            f"registry {ref.domain} started an upload to {ref.path} without a Location",
            "check that the registry speaks the distribution API",
        )
    if location.startswith("/"):  # under the registry's first base URL (registry.insecure)
        location = insecure.endpoints(ref.domain)[0] + location
    url = f"{location}{'&' if '?' in location else '?'}digest={digest}"
    headers = {"Content-Type": "application/octet-stream"}
    client.send("PUT", ref, "", push=True, url=url, body=data, headers=headers)
    return digest


def push_manifest(
    client: RegistryClient, ref: ImageRef, doc: dict[str, Any], reference: str = ""
) -> str:
    """Put ``doc`` under ``reference`` (a tag), or under its own digest; the digest stored."""
    body = json.dumps(doc, separators=(",", ":")).encode()
    tail = f"manifests/{reference or sha256_of(body)}"
    headers = {"Content-Type": doc["mediaType"]}
    resp = client.send("PUT", ref, tail, push=True, body=body, headers=headers)
    return resp.headers.get("docker-content-digest") or sha256_of(body)


def attach(
    client: RegistryClient, ref: ImageRef, digest: str, envelopes: list[tuple[str, str]]
) -> list[Pushed]:
    """Attach DSSE envelopes ``(predicate type, envelope JSON)`` to ``digest`` in ``ref``'s
    repository: by the referrers API where the registry has it, else by cosign's ``.att`` tag."""
    if referrers(client, ref, digest) is not None:
        return _by_referrers(client, ref, digest, envelopes)
    return [_by_tag(client, ref, digest, envelopes)]


def _by_referrers(
    client: RegistryClient, ref: ImageRef, digest: str, envelopes: list[tuple[str, str]]
) -> list[Pushed]:
    subject, _, media = client.manifest(ref, digest)
    head = client.send("HEAD", ref, f"manifests/{digest}")  # the stored size, where it says
    size = int(head.headers.get("content-length") or len(json.dumps(subject).encode()))
    empty = b"{}"
    done = []
    for ptype, env in envelopes:
        data = env.encode()
        layer = _desc(DSSE, data, ptype)
        push_blob(client, ref, empty)
        push_blob(client, ref, data)
        doc = {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "artifactType": DSSE,
            "config": _desc(EMPTY, empty),
            "layers": [layer],
            "subject": {"mediaType": media, "digest": digest, "size": size},
            "annotations": {PREDICATE_ANNOTATION: ptype},
        }
        pushed = push_manifest(client, ref, doc)
        done.append(Pushed("referrers", f"{ref.domain}/{ref.path}@{pushed}", pushed))
    return done


def _by_tag(
    client: RegistryClient, ref: ImageRef, digest: str, envelopes: list[tuple[str, str]]
) -> Pushed:
    tag = att_tag(digest)
    try:
        current, _, _ = client.manifest(ref, tag)
        layers = [layer for layer in current.get("layers", []) if isinstance(layer, dict)]
    except ManifestNotFoundError:
        layers = []
    have = {layer.get("digest") for layer in layers}
    for ptype, env in envelopes:
        data = env.encode()
        desc = _desc(DSSE, data, ptype)
        push_blob(client, ref, data)
        if desc["digest"] not in have:
            layers.append(desc)
            have.add(desc["digest"])
    config = json.dumps(
        {"architecture": "", "os": "", "config": {}, "rootfs": {"type": "layers", "diff_ids": []}},
        separators=(",", ":"),
    ).encode()
    push_blob(client, ref, config)
    doc = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": _desc(COSIGN_CONFIG, config),
        "layers": layers,
    }
    pushed = push_manifest(client, ref, doc, tag)
    return Pushed("tag", f"{ref.domain}/{ref.path}:{tag}", pushed)


def fetch(
    client: RegistryClient, ref: ImageRef, digest: str
) -> tuple[list[tuple[str, bytes]], str]:
    """The DSSE envelopes attached to ``digest`` (by referrers and by the ``.att`` tag), each with
    where it came from; and which ways were looked at."""
    found: list[tuple[str, bytes]] = []
    looked = []
    manifests = referrers(client, ref, digest)
    if manifests is not None:
        looked.append("referrers API")
        for m in _dsse(manifests, "artifactType"):
            doc, mdigest, _ = client.manifest(ref, m["digest"])
            found += [
                (f"{ref.path}@{mdigest}", _blob(client, ref, layer["digest"]))
                for layer in _dsse(doc.get("layers") or [])
            ]
    tag = att_tag(digest)
    looked.append(f"tag {tag}")
    try:
        doc, _, _ = client.manifest(ref, tag)
    except ManifestNotFoundError:
        doc = {}
    found += [
        (f"{ref.path}:{tag}", _blob(client, ref, layer["digest"]))
        for layer in _dsse(doc.get("layers") or [])
    ]
    return found, " and ".join(looked)


def _dsse(descriptors: list[Any], key: str = "mediaType") -> list[dict[str, Any]]:
    """The descriptors (of an index or a manifest) of DSSE envelopes, with a digest."""
    return [
        d
        for d in descriptors
        if isinstance(d, dict) and d.get(key) == DSSE and isinstance(d.get("digest"), str)
    ]


def _index(resp: Any, ref: ImageRef) -> Any:
    """A referrers index as JSON, bounded (netbody): nested past the limit is the registry's
    fault (exit 3); any other ``ValueError`` is not JSON."""
    try:
        return netbody.loads(resp.content, netbody.MANIFEST)
    except netbody.TooDeepError as exc:
        raise transport.too_large(exc, ref.domain, resp.url, "referrers index") from None


def _blob(client: RegistryClient, ref: ImageRef, digest: str) -> bytes:
    resp = client.send("GET", ref, f"blobs/{digest}")
    if sha256_of(resp.content) != digest:
        raise InfrastructureError(
            f"registry {ref.domain} sent blob {digest[:19]}… of {ref.path} with other content",
            "the registry's storage is damaged; push the attestation again",
        )
    return resp.content
