"""Images against their registries: ``images check`` (what each catalogued tag points to
now, drift since the catalog was written, vanished tags, rate limits) and the catalog
rewrite of ``--update`` (planned here as text; the command writes it)."""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .. import imageref, yamlio
from ..catalog.core import Catalog, load_file
from ..errors import InfrastructureError, SpecError
from ..registry import ManifestNotFoundError, RegistryClient
from ..spec import ImageSpec
from .outcome import GATE_FAILED, INCONCLUSIVE, Outcome, Said, passed

# state of one catalogued tag
SAME, MOVED, NEW, VANISHED, LOCAL = "same", "moved", "new", "vanished", "local"
UNREACHABLE = "unreachable"  # its registry did not answer (or refused): the others go on


@dataclass(frozen=True)
class TagCheck:
    alias: str
    reference: str
    state: str
    catalog_digest: str | None = None
    current_digest: str | None = None
    media_type: str | None = None
    rate_limit: str | None = None
    message: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class FileUpdate:
    path: Path
    old: str
    new: str
    aliases: tuple[str, ...]

    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                self.old.splitlines(True),
                self.new.splitlines(True),
                f"a/{self.path.name}",
                f"b/{self.path.name}",
            )
        )


def check(images: Iterable[ImageSpec], client: RegistryClient, workers: int = 8) -> list[TagCheck]:
    """Resolve each image's tag to its digest now (HEAD requests, concurrently). A missing tag is
    ``vanished``; an image whose registry cannot be asked (unreachable, refused credentials)
    is ``unreachable`` with the reason and what to do, and the other images are still checked."""

    def one(image: ImageSpec) -> TagCheck:
        checked = functools.partial(TagCheck, image.alias, image.reference)
        if image.local:
            why = "built locally (make test-images), not in a registry"
            return checked(LOCAL, image.digest, message=why)
        ref = imageref.parse(image.reference)
        ref = imageref.ImageRef(ref.domain, ref.path, ref.tag or "latest", None)
        try:
            got = client.resolve(ref)
        except ManifestNotFoundError as exc:
            return checked(VANISHED, image.digest, message=exc.message)
        except InfrastructureError as exc:
            why = f"{exc.message} ({exc.hint})" if exc.hint else exc.message
            return checked(UNREACHABLE, image.digest, message=why)
        state = NEW if image.digest is None else SAME if got.digest == image.digest else MOVED
        limit = str(got.rate_limit) if got.rate_limit else None
        return checked(state, image.digest, got.digest, got.media_type, limit)

    images = list(images)
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(images)))) as pool:
        return list(pool.map(one, images))


def check_catalog(
    catalog: Catalog, names: Iterable[str] = (), ca: str | None = None, timeout: float = 30
) -> list[TagCheck]:
    """``images check``: the images ``names`` select (default: every catalogued image that
    comes from a registry) resolved through their registries."""
    names = list(names)
    images = (
        catalog.select(names) if names else [i for i in catalog.images if i.executor == "docker"]
    )
    # --timeout is each request's whole time, its body included (not only each read's)
    client = RegistryClient(ca=ca, timeout=timeout, deadline=timeout)
    return check(images, client)


def check_ending(checks: Iterable[TagCheck], updated: bool) -> Outcome:
    """``images check`` exits 1 when a tag moved or vanished, unless --update wrote the
    new digests into the catalog."""
    checks = list(checks)
    moved = [c for c in checks if c.state in (MOVED, VANISHED)]
    lost = [c.alias for c in checks if c.state == UNREACHABLE]
    unasked = f"; registry not reached for {', '.join(lost)}" if lost else ""
    if moved and not updated:
        aliases = ", ".join(c.alias for c in moved)
        why = f"tags moved or vanished: {aliases}{unasked}"
        return Outcome(GATE_FAILED, "drifted", why, (Said("fail", why),) if lost else ())
    if lost:
        why = (
            f"registry not reached for {len(lost)} of {len(checks)} "
            f"image{'s' if len(checks) != 1 else ''}: {', '.join(lost)}"
        )
        return Outcome(INCONCLUSIVE, "infrastructure", why, (Said("error", why),))
    if not moved:
        return passed("every catalogued tag resolves to its catalog digest")
    aliases = ", ".join(c.alias for c in moved)
    return passed(f"the catalog now holds the current digests of {aliases}")


def plan_update(catalog_dir: Path, checks: Iterable[TagCheck]) -> list[FileUpdate]:
    """The catalog files with the new digests of moved and new tags written in, as text that
    keeps every comment and layout (only the ``digest:`` lines change or are added)."""
    wanted = {
        c.alias: c.current_digest for c in checks if c.state in (MOVED, NEW) and c.current_digest
    }
    updates = []
    for path in sorted(Path(catalog_dir).glob("*.yaml")):
        text = yamlio.read_text(path, "catalog file", yamlio.CAPS["yaml"])
        lines = text.splitlines(True)
        edits: list[tuple[int, str, bool]] = []  # (0-based line, new line, replace?)
        changed = []
        for image, sub in load_file(path):
            digest = wanted.get(image.alias)
            if digest is None:
                continue
            entry = sub.data
            if "digest" in entry:
                i = sub.line(("digest",)) - 1
                lead = re.match(r"\s*(?:-\s+)?", lines[i])  # matches every line (maybe empty)
                indent = lead.group(0) if lead else ""
                edits.append((i, f'{indent}digest: "{digest}"\n', True))
            else:
                i = sub.line(("reference",)) - 1
                indent = " " * (len(lines[i]) - len(lines[i].lstrip(" -")))
                edits.append((i + 1, f'{indent}digest: "{digest}"\n', False))
            changed.append(image.alias)
        if not edits:
            continue
        for i, line, replace_ in sorted(edits, reverse=True):
            lines[i : i + replace_] = [line]  # replaces line i, or inserts before it
        updates.append(FileUpdate(path, text, "".join(lines), tuple(changed)))
    return updates


def validate_update(path: Path, update: FileUpdate, checks: Iterable[TagCheck]) -> None:
    """The rewritten file at ``path`` (a temporary copy) loads and carries exactly the new digests."""
    wanted = {c.alias: c.current_digest for c in checks if c.alias in update.aliases}
    got = {image.alias: image.digest for image, _ in load_file(path)}
    wrong = {a: d for a, d in wanted.items() if got.get(a) != d}
    if wrong:
        raise SpecError(
            f"{update.path}: the rewritten catalog does not carry the new digests of "
            f"{', '.join(sorted(wrong))}",
            "the file was left unchanged; edit the digests by hand",
        )
