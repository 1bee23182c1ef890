"""A registry HTTP API v2 client: HEAD for digests (a HEAD does not count as a pull on
registries that limit pulls), GET for manifests, the bearer-token and basic-auth flows,
TLS with a custom CA, and rate-limit headers. Every failure is an InfrastructureError
(exit 3) naming the registry and what to do; a missing manifest is ``ManifestNotFoundError``."""

from __future__ import annotations

import base64
import hashlib
import re
import threading
import time
from dataclasses import dataclass
from typing import Any

import requests

from .. import encode, netbody
from ..errors import InfrastructureError
from ..imageref import ImageRef
from . import auth, insecure, transport

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
ACCEPT = ", ".join((OCI_INDEX, OCI_MANIFEST, DOCKER_LIST, DOCKER_MANIFEST))
INDEXES = (OCI_INDEX, DOCKER_LIST)
#: every registry request of one command together (one client): past it, exit 3
BUDGET_S = 900.0


class ManifestNotFoundError(InfrastructureError):
    """The registry answered, and has no manifest for this tag or digest."""


class RegistryAuthError(InfrastructureError):
    """The registry refused the credentials (or asked for some and there are none)."""


@dataclass(frozen=True)
class RateLimit:
    limit: int | None
    remaining: int | None
    window_s: int | None

    def __str__(self) -> str:
        w = self.window_s
        window = f" per {w // 3600} h" if w and w >= 3600 else f" per {w} s" if w else ""
        return f"{self.remaining}/{self.limit} pulls left{window}"


@dataclass(frozen=True)
class Resolved:
    digest: str
    media_type: str
    rate_limit: RateLimit | None = None


@dataclass(frozen=True)
class Platform:
    """An image for one platform: the digest its tag points to (an index for multi-platform
    images), the digest of the platform's manifest, and its compressed layer sizes."""

    index_digest: str
    manifest_digest: str
    layers: tuple[int, ...]
    config_size: int = 0

    @property
    def compressed_size(self) -> int:
        return sum(self.layers) + self.config_size


def rate_limit(headers: Any) -> RateLimit | None:
    """``RateLimit-Limit: 100;w=21600`` and ``RateLimit-Remaining: 76;w=21600``, when present."""
    lim, rem = headers.get("ratelimit-limit"), headers.get("ratelimit-remaining")
    if lim is None and rem is None:
        return None

    def num(text: str | None) -> tuple[int | None, int | None]:
        if not text:
            return None, None
        m = re.match(r"\s*(\d+)(?:\s*;\s*w=(\d+))?", text)
        return (int(m.group(1)), int(m.group(2)) if m.group(2) else None) if m else (None, None)

    limit, window = num(lim)
    remaining, window2 = num(rem)
    return RateLimit(limit, remaining, window or window2)


class RegistryClient:
    """One client for any number of registries; thread-safe enough for concurrent HEADs
    (tokens are cached per registry and scope)."""

    def __init__(
        self,
        ca: str | None = None,
        timeout: float = 30,
        deadline: float | None = None,
        budget: float = BUDGET_S,
    ) -> None:
        self.ca = ca
        self.timeout = timeout
        # a whole request's time: ``timeout`` bounds each read, and a registry sending one
        # byte per read never passes it
        self.deadline = deadline if deadline is not None else max(60.0, 4 * timeout)
        # and every request of the command (this client) together
        self.budget = budget
        self._until = time.monotonic() + budget
        self._http = requests.Session()
        self._http.headers["User-Agent"] = "valorch"
        self._tokens: dict[tuple[str, str], str] = {}
        self._basic: set[str] = set()
        self._working: dict[str, str] = {}  # domain -> the base URL that answered (https or http)
        self._lock = threading.Lock()

    # -- public ----------------------------------------------------------------------------
    def resolve(self, ref: ImageRef) -> Resolved:
        """The digest ``ref``'s tag (or digest) points to now, by a HEAD request."""
        resp = self.send("HEAD", ref, f"manifests/{ref.reference}")
        digest = resp.headers.get("docker-content-digest")
        if not digest:  # some registries omit it on HEAD: the GET's body digest is authoritative
            resp = self.send("GET", ref, f"manifests/{ref.reference}")
            digest = sha256_of(resp.content)
        media = resp.headers.get("content-type", "").split(";")[0]
        return Resolved(digest, media, rate_limit(resp.headers))

    def manifest(
        self, ref: ImageRef, reference: str | None = None
    ) -> tuple[dict[str, Any], str, str]:
        """(manifest JSON, its digest, its media type) for a tag or digest of ``ref``'s repository."""
        tail = f"manifests/{reference or ref.reference}"
        resp = self.send("GET", ref, tail)
        try:
            doc = netbody.loads(resp.content, netbody.MANIFEST)
        except netbody.TooDeepError as exc:
            raise transport.too_large(exc, ref.domain, resp.url, "manifest") from None
        except ValueError:
            doc = None
        if not isinstance(doc, dict):
            raise InfrastructureError(
                f"registry {ref.domain} sent a manifest for {ref} that is not a JSON object",
                "check that the endpoint is a registry (API v2)",
            )
        digest = resp.headers.get("docker-content-digest") or sha256_of(resp.content)
        media = doc.get("mediaType") or resp.headers.get("content-type", "").split(";")[0]
        return doc, digest, media

    def platform(self, ref: ImageRef, os_: str = "linux", arch: str = "amd64") -> Platform:
        """The manifest for ``os_/arch`` behind ``ref`` (through its index when it has one)."""
        try:
            return self._platform(ref, os_, arch)
        except (AttributeError, TypeError, ValueError, KeyError) as exc:
            raise InfrastructureError(
                f"registry {ref.domain} sent a manifest for {ref} that is not an OCI manifest "
                f"or index ({type(exc).__name__}: {str(exc)[:120]})",
                "check that the endpoint is a registry (API v2), or report it to whoever runs it",
            ) from None

    def _platform(self, ref: ImageRef, os_: str, arch: str) -> Platform:
        doc, digest, media = self.manifest(ref)
        index_digest = digest
        if media in INDEXES or "manifests" in doc:
            plats = [(m, m.get("platform") or {}) for m in doc.get("manifests", [])]
            chosen = [m for m, p in plats if (p.get("os"), p.get("architecture")) == (os_, arch)]
            if not chosen:
                have = sorted({f"{p.get('os')}/{p.get('architecture')}" for _, p in plats})
                raise ManifestNotFoundError(
                    f"registry {ref.domain}: {ref} has no {os_}/{arch} image "
                    f"(platforms: {', '.join(have) or 'none'})",
                    "pick an image built for this platform",
                )
            doc, digest, media = self.manifest(ref, chosen[0]["digest"])
        layers = tuple(int(layer.get("size", 0)) for layer in doc.get("layers", []))
        return Platform(index_digest, digest, layers, int((doc.get("config") or {}).get("size", 0)))

    # -- HTTP and auth ----------------------------------------------------------------------
    def send(
        self,
        method: str,
        ref: ImageRef,
        tail: str,
        *,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        push: bool = False,
        url: str | None = None,
    ) -> requests.Response:
        """One API call with this client's auth, TLS and errors: ``tail`` under ``/v2/<repo>/``
        (or an absolute ``url``, e.g. an upload's Location), with a push scope when ``push``."""
        url = url or f"/v2/{ref.path}/{tail}"
        cap = _cap(method, tail)
        verify, cert = auth.tls_files(ref.domain, self.ca)
        scope = f"repository:{ref.path}:pull" + (",push" if push else "")
        kw: dict[str, Any] = {
            "headers": {"Accept": ACCEPT, **(headers or {})},
            "timeout": self.timeout,
            "verify": verify,
            "cert": cert,
            "data": body,
        }
        headers = self._auth_header(ref.domain, scope)
        resp = self._send(method, url, ref, dict(kw, headers={**kw["headers"], **headers}), cap)
        if resp.status_code == 401:
            headers = self._authenticate(resp, ref, scope, verify, cert)
            resp = self._send(method, url, ref, dict(kw, headers={**kw["headers"], **headers}), cap)
            if resp.status_code == 401:
                creds = auth.credentials(ref.domain)
                raise RegistryAuthError(
                    f"registry {ref.domain} refused the credentials"
                    + (f" of user {creds.username!r} from {creds.source}" if creds else "")
                    + f" for {ref}",
                    f"docker login {ref.domain} with a user that may pull {ref.path}",
                )
        if resp.status_code == 404:
            raise ManifestNotFoundError(
                f"registry {ref.domain} has no manifest {ref.path}:{tail.split('/', 1)[1]}",
                "the tag was removed or renamed: valorch images check lists what moved",
            )
        if resp.status_code == 429:
            limit = rate_limit(resp.headers)
            raise InfrastructureError(
                f"registry {ref.domain} refused {ref}: too many requests"
                + (f" ({limit})" if limit else ""),
                "wait for the rate-limit window, log in (docker login), or use a mirror",
            )
        if resp.status_code >= 400:
            raise InfrastructureError(
                f"registry {ref.domain} answered HTTP {resp.status_code} for {url}: "
                f"{resp.text[:300]}",
                "check the reference and the registry's status",
            )
        return resp

    def _send(
        self,
        method: str,
        path: str,
        ref: ImageRef,
        kw: dict[str, Any],
        cap: tuple[int, str] = (netbody.SMALL, "response"),
    ) -> requests.Response:
        """``path`` on the registry's API: over HTTPS, then plain HTTP for a registry the engine
        treats as insecure (registry.insecure), the base that answered kept for the next request.
        The body is read here, at most ``cap`` (bytes, what it is) and within the deadline."""
        with self._lock:
            working = self._working.get(ref.domain)
        bases = (working,) if working else insecure.endpoints(ref.domain)
        for i, base in enumerate(bases):
            url = path if path.startswith(("https://", "http://")) else base + path
            try:
                resp = self._fetch(ref.domain, url, cap[0], self._http.request, method, url, **kw)
            except netbody.TooLargeError as exc:
                raise transport.too_large(exc, ref.domain, url, cap[1]) from None
            except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as exc:
                if i + 1 < len(bases) and (
                    _not_tls(exc) or insecure.official_endpoints(ref.domain)
                ):
                    # as the engine does: an insecure registry without TLS, try plain HTTP; a
                    # mirror of the official index that does not answer, try the next, then the index
                    continue
                raise self._unreachable(exc, url, ref) from None
            except requests.exceptions.RequestException as exc:
                raise transport.error(exc, ref.domain, url) from None
            with self._lock:
                self._working[ref.domain] = base
            return resp
        raise AssertionError("unreachable: endpoints() names at least one base URL")

    def _fetch(
        self, domain: str, url: str, cap: int, call: Any, *args: Any, **kw: Any
    ) -> requests.Response:
        """``call(*args, **kw)`` streamed, its body read (at most ``cap`` bytes, an error
        answer's first 64 KiB) within ``deadline`` and what is left of the ``budget``."""
        left = self._until - time.monotonic()
        if left <= 0:
            raise InfrastructureError(
                f"registry {domain}: this command's registry requests took more than "
                f"{self.budget:g} s in all; {encode.url(url.split('?')[0])} was not asked",
                "check the registries' health and the network, or ask for fewer images at once",
            )
        deadline = min(self.deadline, left)
        until = time.monotonic() + deadline

        def redirect_body(resp: requests.Response, *_: Any, **__: Any) -> None:
            if resp.is_redirect:  # requests reads a redirect's body whole before it follows
                netbody.read(resp, netbody.SMALL, until, cut=True)

        def fetch() -> requests.Response:
            resp: requests.Response = call(
                *args, **kw, stream=True, hooks={"response": [redirect_body]}
            )
            failed = resp.status_code >= 400
            netbody.read(resp, netbody.SMALL if failed else cap, until, cut=failed)
            return resp

        return transport.within(deadline, domain, url, fetch)

    def _unreachable(self, exc: Exception, url: str, ref: ImageRef) -> InfrastructureError:
        if isinstance(exc, requests.exceptions.SSLError):
            hint = (
                insecure.tls_hint(ref.domain)
                if _not_tls(exc)
                else f"pass the registry's CA with --ca FILE, or put it in /etc/docker/certs.d/{ref.domain}/ca.crt"
            )
            return InfrastructureError(f"TLS to registry {ref.domain} failed: {_short(exc)}", hint)
        return InfrastructureError(
            f"registry {ref.domain} is unreachable at {url.split('/v2/')[0]}: {_short(exc)}",
            (
                f"{ref.domain} is reached where the Docker engine reaches it (its registry mirrors, "
                "then its index address, as `docker info` shows them): check that the engine can "
                f"pull from it, or map it to a mirror: VALORCH_REGISTRY_ENDPOINTS={ref.domain}=URL; "
                if insecure.official_endpoints(ref.domain)
                else "Docker Hub's registry API is served on another host than docker.io, and no "
                "Docker engine answered to say where: start one, or set "
                "VALORCH_REGISTRY_ENDPOINTS=docker.io=https://<that host or a mirror>; "
                if ref.domain == "docker.io"
                else ""
            )
            + "check the host name, port, network and proxy settings (a run with --pull never "
            "needs no registry when the images are already on the engine)",
        )

    def _auth_header(self, domain: str, scope: str) -> dict[str, str]:
        with self._lock:
            token = self._tokens.get((domain, scope))
            basic = domain in self._basic
        if token:
            return {"Authorization": f"Bearer {token}"}
        if basic:
            creds = auth.credentials(domain)
            if creds:
                return {"Authorization": _basic(creds)}
        return {}

    def _authenticate(
        self, resp: requests.Response, ref: ImageRef, scope: str, verify: Any, cert: Any
    ) -> dict[str, str]:
        challenge = auth.parse_challenge(resp.headers.get("www-authenticate", ""))
        creds = auth.credentials(ref.domain)
        if challenge is None or challenge.scheme not in ("bearer", "basic"):
            raise RegistryAuthError(
                f"registry {ref.domain} asks for authentication valorch does not speak "
                f"({resp.headers.get('www-authenticate', 'no WWW-Authenticate header')!r})",
                "use a registry with basic or bearer-token auth",
            )
        if challenge.scheme == "basic":
            if creds is None:
                raise RegistryAuthError(
                    f"registry {ref.domain} needs a login to read {ref} and there are no "
                    f"credentials for it in {auth.config_path()}",
                    f"docker login {ref.domain} (or set DOCKER_CONFIG)",
                )
            with self._lock:
                self._basic.add(ref.domain)
            return {"Authorization": _basic(creds)}
        token = self._token(challenge, ref, scope, creds, verify, cert)
        with self._lock:
            self._tokens[(ref.domain, scope)] = token
        return {"Authorization": f"Bearer {token}"}

    def _token(
        self,
        challenge: auth.Challenge,
        ref: ImageRef,
        scope: str,
        creds: auth.Credentials | None,
        verify: Any,
        cert: Any,
    ) -> str:
        realm = challenge.params.get("realm")
        if not realm:
            raise RegistryAuthError(
                f"registry {ref.domain} sent a Bearer challenge without a realm",
                "the registry's token auth is misconfigured",
            )
        params = {"scope": challenge.params.get("scope", scope)}
        if challenge.params.get("service"):
            params["service"] = challenge.params["service"]
        kw: dict[str, Any] = {
            "params": params,
            "timeout": self.timeout,
            "verify": verify,
            "cert": cert,
        }
        if creds is not None and not creds.identity_token:
            kw["auth"] = (creds.username, creds.password)
        try:
            resp = self._fetch(ref.domain, realm, netbody.TOKEN, self._http.get, realm, **kw)
        except netbody.TooLargeError as exc:
            raise transport.too_large(
                exc, ref.domain, realm, "token response", "the token service of "
            ) from None
        except requests.exceptions.SSLError as exc:
            raise InfrastructureError(
                f"TLS to the token service {realm} of registry {ref.domain} failed: {_short(exc)}",
                "pass its CA with --ca FILE",
            ) from None
        except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as exc:
            raise InfrastructureError(
                f"the token service {realm} of registry {ref.domain} is unreachable: {_short(exc)}",
                "check the network and proxy settings",
            ) from None
        except requests.exceptions.RequestException as exc:  # a realm that is no URL, a loop
            raise transport.error(exc, ref.domain, realm, "the token service of ") from None
        if resp.status_code in (401, 403):
            who = f" user {creds.username!r} from {creds.source}" if creds else " anonymous access"
            raise RegistryAuthError(
                f"the token service of registry {ref.domain} refused{who} for {ref}",
                f"docker login {ref.domain} with a user that may pull {ref.path}",
            )
        try:
            body = netbody.loads(resp.content, netbody.TOKEN)
            token = body.get("token") or body["access_token"]
            if not isinstance(token, str):
                raise TypeError("not a string")
            return token
        except netbody.TooDeepError as exc:
            raise transport.too_large(
                exc, ref.domain, realm, "token response", "the token service of "
            ) from None
        except (ValueError, KeyError, AttributeError, TypeError):
            raise RegistryAuthError(
                f"the token service {realm} of registry {ref.domain} answered HTTP "
                f"{resp.status_code} without a token",
                "check the registry's token auth",
            ) from None


def _cap(method: str, tail: str) -> tuple[int, str]:
    """How much of an answer's body valorch reads, and what it is (docs/registries.md)."""
    if method == "GET":
        if tail.startswith("manifests/"):
            return netbody.MANIFEST, "manifest"
        if tail.startswith("referrers/"):
            return netbody.MANIFEST, "referrers index"
        if tail.startswith("blobs/"):  # the only blobs valorch reads: attestation layers
            return netbody.ATTESTATION, "attestation layer"
    return netbody.SMALL, "response"


def _basic(creds: auth.Credentials) -> str:
    return "Basic " + base64.b64encode(f"{creds.username}:{creds.password}".encode()).decode()


def sha256_of(body: bytes) -> str:
    """``sha256:<hex>``: the digest of a manifest or blob's bytes."""
    return "sha256:" + hashlib.sha256(body).hexdigest()


def _not_tls(exc: Exception) -> bool:
    """The HTTPS attempt failed because the server does not speak TLS there (it answered the
    TLS hello in plain HTTP), or never answered: then plain HTTP may be tried. A TLS server
    whose certificate is not trusted is not downgraded: that is the CA's problem to fix."""
    if not isinstance(exc, requests.exceptions.SSLError):
        return True
    return any(
        w in str(exc) for w in ("wrong version number", "record layer failure", "http request")
    )


def _short(exc: Exception) -> str:
    """The useful words of a requests/urllib3 error (they nest three exceptions deep)."""
    text = str(exc)
    for pattern in (
        r"certificate verify failed: [^(\"')]*",
        r"Name or service not known",
        r"Connection refused",
        r"No route to host",
        r"timed out",
        r"Temporary failure in name resolution",
        r"Network is unreachable",
        r"wrong version number",
        r"Connection reset by peer",
    ):
        m = re.search(pattern, text)
        if m:
            return m.group(0).strip()
    return text[:300]
