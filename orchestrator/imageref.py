"""Image references: ``[domain/]path[:tag][@sha256:hex]``, parsed and normalised (pure).

The grammar is the one the Docker engine and the registries use
(distribution/reference): the first path component is a registry domain when it
contains a ``.`` or a ``:``, or is ``localhost``; otherwise the image lives on
Docker Hub (``docker.io``) and a one-component path gets ``library/``. A
malformed reference, a scheme other than ``docker://``, or a digest that is not
``sha256:`` and 64 lower-case hex characters is bad input (exit 2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .errors import InputError

DEFAULT_DOMAIN = "docker.io"
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_PATH = re.compile(rf"^{_COMPONENT}(?:/{_COMPONENT})*$")
_DOMAIN = re.compile(
    r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
    r"|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$"
)
_TAG = re.compile(r"^[\w][\w.-]{0,127}$")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_HINT = (
    "an image reference is [REGISTRY[:PORT]/]NAME[:TAG][@sha256:<64 hex>], e.g. "
    "rocm/pytorch:rocm6.3_ubuntu24.04_py3.12_pytorch_release_2.4.0 or localhost:5000/x@sha256:…"
)


@dataclass(frozen=True)
class ImageRef:
    """One parsed reference. ``domain`` is always set (``docker.io`` when none was written)."""

    domain: str
    path: str
    tag: str | None = None
    digest: str | None = None

    @property
    def repository(self) -> str:
        """``domain/path``: the name the engine lists in RepoDigests (familiar form for Hub)."""
        if self.domain == DEFAULT_DOMAIN:
            return self.path[len("library/") :] if self.path.startswith("library/") else self.path
        return f"{self.domain}/{self.path}"

    @property
    def reference(self) -> str:
        """What the manifests endpoint takes: the digest when pinned, else the tag."""
        return self.digest or self.tag or "latest"

    def pinned(self, digest: str | None = None) -> str:
        """``repository@sha256:…`` (this reference's digest, or the one given)."""
        d = check_digest(digest) if digest else self.digest
        if not d:
            raise InputError(f"{self} has no digest to pin", "pass a digest")
        return f"{self.repository}@{d}"

    def tagged(self) -> str:
        return f"{self.repository}:{self.tag or 'latest'}"

    def with_digest(self, digest: str) -> ImageRef:
        return replace(self, digest=check_digest(digest))

    def __str__(self) -> str:
        text = self.repository
        if self.tag:
            text += f":{self.tag}"
        if self.digest:
            text += f"@{self.digest}"
        return text


def check_digest(text: str, where: str = "") -> str:
    """``text`` if it is ``sha256:`` + 64 lower-case hex characters, else exit 2."""
    if not DIGEST.match(text or ""):
        raise InputError(
            f"{where}digest {text!r} is not sha256: followed by 64 lower-case hex characters",
            "copy the digest a registry or `docker image inspect` shows (RepoDigests)",
        )
    return text


def looks_like_reference(text: str) -> bool:
    """A name a user typed that is meant as a reference rather than a catalog alias."""
    return any(ch in text for ch in "/:@")


def parse(text: str) -> ImageRef:
    """The reference ``text`` names, or an InputError (exit 2) saying what is wrong."""
    raw = text.strip()
    if "://" in raw:
        scheme, rest = raw.split("://", 1)
        if scheme != "docker":
            raise InputError(
                f"image reference {text!r}: unknown scheme {scheme + '://'!r}",
                "write the reference without a scheme (docker:// is accepted); " + _HINT,
            )
        raw = rest
    if not raw:
        raise InputError("empty image reference", _HINT)
    name, digest = raw, None
    if "@" in raw:
        name, digest = raw.split("@", 1)
        check_digest(digest, f"image reference {text!r}: ")
    tag = None
    slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > slash:
        name, tag = name[:colon], name[colon + 1 :]
        if not _TAG.match(tag):
            raise InputError(
                f"image reference {text!r}: tag {tag!r} is not valid "
                "(letters, digits, _ . -; at most 128; not starting with . or -)",
                _HINT,
            )
    domain, path = DEFAULT_DOMAIN, name
    first, sep, rest = name.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        domain, path = first, rest
        if not _DOMAIN.match(domain):
            raise InputError(
                f"image reference {text!r}: registry {domain!r} is not a host[:port]", _HINT
            )
    if domain == DEFAULT_DOMAIN and path and "/" not in path:
        path = f"library/{path}"
    if not path or not _PATH.match(path):
        raise InputError(
            f"image reference {text!r}: repository name {path!r} is not valid "
            "(lower-case letters, digits and separators . _ __ - between them, / between parts)",
            _HINT,
        )
    if len(f"{domain}/{path}") > 255:
        raise InputError(f"image reference {text!r}: the name is longer than 255 characters", _HINT)
    return ImageRef(domain=domain, path=path, tag=tag if tag or digest else "latest", digest=digest)


def identity(reference: str, repo_digests: list[str] | tuple[str, ...], image_id: str) -> str:
    """The digest that names an image present on an engine, the same on every engine that holds it:
    the reference's own pinned digest when the engine lists it; else the manifest digest the engine
    recorded for the reference's repository (RepoDigests: ``repository@sha256:…``); else the image
    id (a local image, built or loaded, that no registry served). A RepoDigest of another repository
    says only that the same image was once pushed there: it is never taken, or one image would have
    two digests on two engines."""
    try:
        ref = parse(reference)
    except InputError:
        return image_id
    mine = [
        d.split("@", 1)[1]
        for d in repo_digests
        if "@" in d and _same_repository(d.split("@", 1)[0], ref.repository)
    ]
    if ref.digest and ref.digest in mine:
        return ref.digest
    return mine[0] if mine else image_id


def _same_repository(listed: str, repository: str) -> bool:
    try:
        return parse(listed).repository == repository
    except InputError:
        return False
