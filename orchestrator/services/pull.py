"""Getting an image onto a host's engine before anything runs, and proving it is the one
meant: ``--pull missing|always|never``, pinned digests pulled and run as ``repo@sha256:…``,
RepoDigests checked after the pull (Docker's pull by tag checks no digest: moby/moby#22492),
the index and platform manifest digests kept apart (bazelbuild/rules_docker#714), and a
disk-space check from the manifest's compressed size before a pull starts."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import imageref
from ..catalog.core import Catalog
from ..errors import InfrastructureError, InputError
from ..executors import pull as engine
from ..executors.pull import runnable
from ..spec import HostSpec, ImageSpec
from . import outcome as ending

if TYPE_CHECKING:
    from ..registry import Platform, RegistryClient
    from ..scheduling.plan import PlannedRun

POLICIES = ("missing", "always", "never")


class DigestMismatchError(InfrastructureError):
    """The engine holds another image than the digest valorch expected."""


class NoRoomError(InfrastructureError):
    """The engine has less free space than the image's compressed size."""


@dataclass(frozen=True)
class Staged:
    """An image ready on a host: what runs (``reference``, by digest when one is known)."""

    host: str
    alias: str
    reference: str
    index_digest: str | None
    platform_digest: str | None
    compressed_size: int | None
    pulled: bool
    note: str = ""

    def meta(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k not in ("host", "alias")}


def check_policy(policy: str) -> str:
    if policy not in POLICIES:
        raise InputError(
            f"--pull {policy!r} is not one of {', '.join(POLICIES)}",
            "missing (default) pulls absent images, always pulls every time, never uses what is there",
        )
    return policy


def _held(attrs: dict[str, Any] | None, ref: imageref.ImageRef) -> tuple[str, ...]:
    """The digests the engine records for ``ref``'s repository."""
    out = []
    for entry in engine.repo_digests(attrs):
        name, _, digest = entry.partition("@")
        try:
            if imageref.parse(name).repository == ref.repository:
                out.append(digest)
        except InputError:
            continue
    return tuple(out)


def _verify(
    attrs: dict[str, Any] | None,
    ref: imageref.ImageRef,
    expected: str,
    image: ImageSpec,
    host: HostSpec,
    why: str,
) -> None:
    held = _held(attrs, ref)
    if expected not in held:
        raise DigestMismatchError(
            f"digest mismatch for {image.alias} on {host.name}: {why} {expected}, the engine holds "
            f"{', '.join(held) or 'an image without a digest from ' + ref.repository}; nothing was run",
            "the tag moved between resolve and pull, or another image has this name: run valorch images check "
            "(and images check --update if the move is intended), then pull again",
        )


def stage(
    image: ImageSpec,
    host: HostSpec,
    policy: str,
    registry: RegistryClient,
    on_event: Callable[[str, engine.PullEvent], None] | None = None,
    cancel: threading.Event | None = None,
) -> Staged:
    """``image`` present and verified on ``host`` under ``policy``; raises InfrastructureError
    (exit 3) when it cannot be: absent under ``never``, no room, pull failed, digest mismatch."""
    from ..executors.docker import connect

    client = connect(host)
    ref = imageref.parse(image.reference)
    pinned = image.digest or ref.digest
    run_ref = ref.pinned(pinned) if pinned else ref.tagged()
    attrs = engine.inspect(client, run_ref)
    pulled = attrs is None or policy == "always"
    if not pulled:
        held = _held(attrs, ref)
        if pinned:
            _verify(attrs, ref, pinned, image, host, "the catalog pins")
        digest = pinned or (held[0] if held else None)
        plat = (
            None
            if policy == "never" or digest is None
            else _platform(registry, ref, digest, strict=False)
        )
        note = "already on the engine"
    elif policy == "never":
        raise InfrastructureError(
            f"image {image.alias} ({run_ref}) is not on {host.name}, and --pull never "
            "forbids pulling it; nothing was run or stored",
            f"pull it first (valorch images pull {image.alias}) or use --pull missing",
        )
    else:
        plat = _platform(registry, ref, pinned, strict=not pinned)
        digest = pinned or (plat.index_digest if plat else "")  # unpinned: strict, plat is there
        if plat is not None:
            free = engine.free_bytes(client, host)
            if free is not None and plat.compressed_size > free:
                raise NoRoomError(
                    f"host {host.name} has {_size(free)} free for images; {image.alias} needs at "
                    f"least {_size(plat.compressed_size)} (compressed) from registry {ref.domain}: "
                    "not pulled",
                    "free space on that engine (docker system prune) or stage the image on another "
                    "host",
                )
        key = f"{host.name}:{image.alias}"
        told = (lambda ev: on_event(key, ev)) if on_event else (lambda ev: None)
        engine.pull(client, host, run_ref, told, cancel)
        why = "the catalog pins" if pinned else f"registry {ref.domain} resolved {ref.tagged()} to"
        _verify(engine.inspect(client, run_ref), ref, digest, image, host, why)
        note = "" if plat else "platform digest unknown: the registry API did not answer"
    return Staged(
        host.name,
        image.alias,
        ref.pinned(digest) if digest else run_ref,
        digest,
        plat.manifest_digest if plat else None,
        plat.compressed_size if plat else None,
        pulled,
        note,
    )


def _platform(
    registry: RegistryClient, ref: imageref.ImageRef, digest: str | None, strict: bool
) -> Platform | None:
    """The linux/amd64 manifest behind ``ref`` (at ``digest`` when given). With ``strict`` a
    registry failure raises; otherwise it is None (the engine may still reach the registry)."""
    try:
        return registry.platform(ref.with_digest(digest) if digest else ref)
    except InfrastructureError:
        if strict:
            raise
        return None


def _size(size: int) -> str:
    n = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


@dataclass(frozen=True)
class Outcome:
    host: str
    alias: str
    staged: Staged | None
    error: str | None
    kind: str = ""  # "no-room", "mismatch", "error" when it failed


def stage_many(
    pairs: Iterable[tuple[ImageSpec, HostSpec]],
    policy: str,
    registry: RegistryClient,
    on_event: Callable[[str, engine.PullEvent], None] | None = None,
) -> list[Outcome]:
    """Every (image, host) pair staged concurrently; failures are outcomes, not exceptions."""
    cancel = threading.Event()

    def one(pair: tuple[ImageSpec, HostSpec]) -> Outcome:
        image, host = pair
        ended = functools.partial(Outcome, host.name, image.alias)
        try:
            return ended(stage(image, host, policy, registry, on_event, cancel=cancel), None)
        except InfrastructureError as exc:
            kind = {NoRoomError: "no-room", DigestMismatchError: "mismatch"}.get(type(exc))
            return ended(None, str(exc), kind or "error")
        except engine.Cancelled:
            return ended(None, "cancelled", "cancelled")

    pairs = list(pairs)
    pool = ThreadPoolExecutor(max_workers=max(1, min(4, len(pairs))))
    try:
        futures = [pool.submit(one, p) for p in pairs]
        return [f.result() for f in futures]
    except KeyboardInterrupt:
        # Ctrl-C: every pull stops at its next progress line and closes its stream, so the
        # engine cancels it; an image is tagged only when complete, so nothing half-pulled
        # is left to be mistaken for the image by the next run.
        cancel.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def presence(images: Iterable[ImageSpec], hosts_file: Path | None = None) -> list[dict[str, Any]]:
    """Per host and image: present or not, and with which digest (``images list --present``)."""
    from ..executors.docker import connect
    from ..hosts.inventory import resolve_hosts

    rows: list[dict[str, Any]] = []
    images = list(images)
    for host in resolve_hosts(hosts_file):
        try:
            client = connect(host, timeout=15)
        except InfrastructureError as exc:
            rows += [
                {
                    "host": host.name,
                    "alias": i.alias,
                    "present": None,
                    "digest": None,
                    "error": exc.message,
                }
                for i in images
            ]
            continue
        for image in images:
            if image.executor != "docker":
                continue
            ref = imageref.parse(image.reference)
            attrs = engine.inspect(client, runnable(image)) or engine.inspect(
                client, image.reference
            )
            held = _held(attrs, ref)
            rows.append(
                {
                    "host": host.name,
                    "alias": image.alias,
                    "present": attrs is not None,
                    "digest": (held[0] if held else (attrs or {}).get("Id")) if attrs else None,
                    "pinned": image.digest,
                    "error": None,
                }
            )
    return rows


def stage_planned(
    planned: Sequence[PlannedRun],
    policy: str,
    registry: RegistryClient,
    on_event: Callable[[str, engine.PullEvent], None] | None = None,
) -> tuple[tuple[PlannedRun, ...], dict[tuple[str, str], Staged | None]]:
    """Every planned (image, host) of a job staged before anything is queued: a failure raises
    (exit 3) and nothing is stored. Returns the planned runs with each image's verified digest
    filled in (so the executor runs ``repo@sha256:…``), and the staged images by (host, alias)."""
    from ..scheduling.plan import PlannedRun

    pairs = {
        (pr.host.name, pr.image.alias): pr
        for pr in planned
        if pr.image.executor == "docker" and not pr.image.local
    }
    outcomes = stage_many(
        ((pr.image, pr.host) for pr in pairs.values()), policy, registry, on_event
    )
    failed = [o for o in outcomes if o.error]
    if failed:
        raise (
            DigestMismatchError
            if any(o.kind == "mismatch" for o in failed)
            else InfrastructureError
        )("\n".join(o.error or "" for o in failed), "nothing was run or stored")
    staged = {(o.host, o.alias): o.staged for o in outcomes}
    out = []
    for pr in planned:
        s = staged.get((pr.host.name, pr.image.alias))
        if s is not None and s.index_digest and pr.image.digest != s.index_digest:
            image = pr.image.model_copy(update={"digest": s.index_digest})
            pr = PlannedRun(
                image, pr.host, tuple(t.model_copy(update={"image": image}) for t in pr.tasks)
            )
        out.append(pr)
    return tuple(out), staged


def never_pulled(images: Iterable[ImageSpec]) -> list[tuple[str, str]]:
    """(alias, why) of each selected image ``images pull`` does not pull: built locally, or
    not run in a container."""
    return [
        (
            i.alias,
            "built locally (make test-images builds it), never pulled"
            if i.local
            else f"runs with the {i.executor} executor, not from a registry",
        )
        for i in images
        if i.executor != "docker" or i.local
    ]


def pull_images(
    images: Iterable[ImageSpec],
    hosts_file: Path | None = None,
    policy: str = "missing",
    ca: str | None = None,
    on_event: Callable[[str, engine.PullEvent], None] | None = None,
) -> list[Outcome]:
    """``images pull``: every registry image on every host that could run it, concurrently
    (``--pull never`` would pull nothing: bad input here); an image no host can run is an
    error naming the nearest hosts (exit 3)."""
    from ..hosts.inventory import resolve_hosts
    from ..hosts.match import match
    from ..registry import RegistryClient
    from ..scheduling.plan import requirement

    if check_policy(policy) == "never":
        raise InputError(
            "images pull --pull never would pull nothing: it takes missing or always",
            "to see which images each host holds: valorch images list --present",
        )
    hosts = resolve_hosts(hosts_file)
    pairs = [
        (image, h)
        for image in images
        if image.executor == "docker" and not image.local
        for h in match(requirement(image), hosts, image.alias)
    ]
    return stage_many(pairs, policy, RegistryClient(ca=ca), on_event)


def pull_ending(
    outcomes: Iterable[Outcome], skipped: Iterable[tuple[str, str]] = ()
) -> ending.Outcome:
    """``images pull`` exits 3 when an image could not be staged on a host; each selected
    image it does not pull is said, with why (a table with no row is never all it prints)."""
    said = tuple(ending.Said("warn", f"not pulled: {alias}: {why}") for alias, why in skipped)
    failed = [f"{o.alias} on {o.host}" for o in outcomes if o.error]
    if failed:
        return ending.Outcome(
            ending.INCONCLUSIVE, "infrastructure", "not staged: " + ", ".join(failed), said
        )
    return ending.passed("every image is on every host that can run it", said)


def typed_tags(
    cat: Catalog, typed: Iterable[str], client: RegistryClient
) -> tuple[Catalog, tuple[str, ...]]:
    """``cat`` with each catalogued registry image that the user named by its ``REPO:TAG``
    (``run --image``) pinned to the digest the tag names now: what the user typed is what
    runs. A name that is an alias, a digest or an uncatalogued reference is left alone
    (an alias runs its pin; a digest is exact; an uncatalogued tag is resolved at the pull).
    With it, what to say: each tag that moved from its pin, and each that could not be
    followed, so that its pin runs (docs/registries.md)."""
    from .images import MOVED, SAME, check

    chosen: list[tuple[str, ImageSpec]] = []
    for name in typed:
        if (
            not imageref.looks_like_reference(name)
            or "@" in name
            or name.startswith(("family:", "backend:"))
            or any(ch in name for ch in "*?[")
        ):
            continue
        try:
            ref = imageref.parse(name)
            image = cat.resolve(name)
        except InputError:  # said where the job is made, with the same words
            continue
        if (
            ref.tag is None
            or image.derived
            or image.local
            or image.executor != "docker"
            or not image.digest
            or image.alias in {a.alias for _n, a in chosen}
        ):
            continue
        chosen.append((name, image))
    if not chosen:
        return cat, ()
    found = check([image for _n, image in chosen], client)
    said: list[str] = []
    moved: dict[str, str] = {}
    for (name, image), tag in zip(chosen, found, strict=True):
        alias, pinned, now = image.alias, image.digest, tag.current_digest
        if tag.state not in (SAME, MOVED) or not now:  # unreachable, or the tag is gone
            said.append(
                f"{name}: could not learn what the tag names now ({tag.message or tag.state}); "
                f"running the catalogue's pin {pinned} ({alias})"
            )
        elif now != pinned:
            moved[alias] = now
            said.append(
                f"{name}: the tag has moved: it names {now} now, the catalogue pins {pinned} "
                f"({alias}); running {now}, what the tag names now (valorch images check "
                f"--update {alias} moves the pin; --image {alias} runs the pin)"
            )
    if moved:
        cat = Catalog(
            tuple(
                i.model_copy(update={"digest": moved[i.alias]}) if i.alias in moved else i
                for i in cat.images
            )
        )
    return cat, tuple(said)
