"""The image catalog (images/*.yaml) and job specs (jobs/*.yaml).

Resolution of what a user types for ``--image``:
exact alias → exact reference or tag → short alias (the distro part dropped,
``rocm6.3_py3.12_pytorch_2.4``) → a tag that parses (rocm/pytorch or
pytorch/pytorch naming) → glob over aliases and short aliases (selectors in job specs).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .. import imageref, yamlio
from ..errors import AmbiguousImageError, InputError, SpecError, UnknownImageError
from ..spec import Backend, ImageSpec
from .jobcheck import GLOB_HINT, declares_nothing, glob_problem, suite_check_ids
from .jobcheck import load_job as load_job  # re-exported: where the callers read jobs from

HOST_IMAGE = ImageSpec(
    alias="host",
    reference="host",
    backend=Backend.cpu,
    family="host",
    executor="host",
    local=True,
    notes="The local Python interpreter, no container.",
)

_ROCM_TAG = re.compile(
    r"^(?:(?:docker\.io/)?rocm/pytorch:)?rocm(?P<rocm>\d+(?:\.\d+)*)_(?P<distro>ubuntu|rhel|sles|centos)"
    r"(?P<os>\d+(?:\.\d+)*)_py(?P<python>\d+\.\d+(?:\.\d+)?)_pytorch_(?:release_)?(?P<pytorch>\d+(?:\.\d+)*)$"
)
_CUDA_TAG = re.compile(
    r"^(?:(?:docker\.io/)?pytorch/pytorch:)?(?P<pytorch>\d+\.\d+(?:\.\d+)?)-cuda(?P<cuda>\d+(?:\.\d+)*)"
    r"-cudnn(?P<cudnn>\d+)-(?:runtime|devel)$"
)
_DISTRO_PART = re.compile(r"_(?:ubuntu|debian|rhel|sles|centos)\d+(?:\.\d+)*")


class ImageFile(BaseModel):
    """One images/*.yaml file: defaults for its family, then the entries."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    family: str
    backend: Backend
    local: bool = False
    images: tuple[dict[str, Any], ...] = Field(min_length=1)


def short_alias(alias: str) -> str:
    return _DISTRO_PART.sub("", alias)


def _major_minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def parse_tag(text: str) -> ImageSpec | None:
    """An image that is not catalogued, described by what its tag says."""
    tag = text.split(":", 1)[-1]
    if m := _ROCM_TAG.match(text):
        g = m.groupdict()
        said: dict[str, Any] = {
            "alias": f"rocm{g['rocm']}_{g['distro']}{g['os']}_py{_major_minor(g['python'])}_pytorch_{_major_minor(g['pytorch'])}",
            "reference": f"rocm/pytorch:{tag}",
            "backend": Backend.rocm,
            "os": f"{g['distro']} {g['os']}",
            "components": {
                "rocm": g["rocm"],
                g["distro"]: g["os"],
                "python": g["python"],
                "pytorch": g["pytorch"],
            },
        }
    elif m := _CUDA_TAG.match(text):
        g = m.groupdict()
        said = {
            "alias": f"cuda{g['cuda']}_cudnn{g['cudnn']}_pytorch_{_major_minor(g['pytorch'])}",
            "reference": f"pytorch/pytorch:{tag}",
            "backend": Backend.cuda,
            "components": {"pytorch": g["pytorch"], "cuda": g["cuda"], "cudnn": g["cudnn"]},
        }
    else:
        return None
    notes = "Not catalogued: expectations parsed from the tag."
    return ImageSpec(**said, family=said["backend"].value, derived=True, notes=notes)


def derived_alias(ref: imageref.ImageRef) -> str:
    """The alias of an uncatalogued reference: its registry (unless Docker Hub), its whole
    repository path and its tag (or the digest's first 12 hex), so that two references
    never share one ("127.0.0.1:5177/hb/base:v1" → "127.0.0.1_5177_hb_base_v1",
    "valorch/test:fake-rocm" → "valorch_test_fake-rocm"; Hub's "library/" is left out)."""
    path = ref.path.removeprefix("library/") if ref.domain == imageref.DEFAULT_DOMAIN else ref.path
    parts = ([] if ref.domain == imageref.DEFAULT_DOMAIN else [ref.domain]) + path.split("/")
    parts.append(ref.tag if ref.tag else (ref.digest or "")[7:19])
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", "_".join(parts))


def from_reference(text: str, known: Iterable[ImageSpec] = ()) -> ImageSpec:
    """Any image reference (``docker.io/org/name:tag``, ``localhost:5000/x@sha256:…``): the
    catalogued image it names after normalisation, else an image with no expectations whose
    backend is guessed from its name (a bad reference is exit 2)."""
    ref = imageref.parse(text)
    for image in known:
        if image.executor != "docker":
            continue
        try:
            other = imageref.parse(image.reference)
        except InputError:
            continue
        same = (other.repository, other.tag) == (ref.repository, ref.tag)
        if same and ref.digest in (None, image.digest):
            return image
    alias = derived_alias(ref)
    words = f"{ref.path}:{ref.tag or ''}".lower()
    backend = Backend.rocm if "rocm" in words else Backend.cuda if "cuda" in words else Backend.cpu
    return ImageSpec(
        alias=alias,
        reference=str(ref),
        backend=backend,
        family="reference",
        digest=ref.digest,
        derived=True,
        notes=f"Not catalogued: no expectations; backend {backend} guessed from the name.",
    )


def load_file(path: Path) -> list[tuple[ImageSpec, yamlio.Document]]:
    """The images of one catalog file, each with its YAML node (for line numbers and edits)."""
    doc = yamlio.load(path, "catalog file")
    head = yamlio.validate(doc, ImageFile, "image catalog")
    out = []
    for i, entry in enumerate(head.images):
        sub = doc.sub(("images", i))
        merged = {"family": head.family, "backend": head.backend, "local": head.local, **entry}
        sub = yamlio.Document(sub.path, merged, sub.node)
        out.append((yamlio.validate(sub, ImageSpec, "image"), sub))
    return out


@dataclass(frozen=True)
class Catalog:
    images: tuple[ImageSpec, ...]

    @classmethod
    def load(cls, directory: Path) -> Catalog:
        directory = Path(directory)
        if not directory.is_dir():
            raise SpecError(
                f"{directory}: image catalog directory not found",
                "run valorch from the project directory or pass --catalog DIR",
            )
        images: list[ImageSpec] = [HOST_IMAGE]
        seen: dict[str, Path] = {"host": Path("(built in)")}
        for path in sorted(directory.glob("*.yaml")):
            for image, sub in load_file(path):
                if image.alias in seen:
                    raise SpecError(
                        f"{path}:{sub.line(('alias',))}: image alias '{image.alias}' is "
                        f"already defined in {seen[image.alias]}",
                        "aliases must be unique",
                    )
                seen[image.alias] = path
                images.append(image)
        return cls(tuple(images))

    def by_alias(self) -> dict[str, ImageSpec]:
        return {i.alias: i for i in self.images}

    def resolve(self, name: str) -> ImageSpec:
        """One image for what a user typed, or an error that says what to type instead."""
        name = name.strip()
        exact = [i for i in self.images if name in (i.alias, i.reference)]
        if not exact:
            exact = [i for i in self.images if i.reference.split(":", 1)[-1] == name]
        if not exact:
            exact = [i for i in self.images if short_alias(i.alias) == name]
        if len(exact) == 1:
            return exact[0]
        if len(exact) > 1:
            listing = "\n".join(f"  {i.alias:45} {i.reference}" for i in exact)
            raise AmbiguousImageError(
                f"image '{name}' is ambiguous; it matches {len(exact)} images:\n{listing}",
                "use one of the full aliases above",
            )
        parsed = parse_tag(name)
        if parsed is not None:
            return parsed
        if imageref.looks_like_reference(name):
            return from_reference(name, self.images)
        from difflib import SequenceMatcher

        near = sorted(self.images, key=lambda i: -SequenceMatcher(None, name, i.alias).ratio())[:3]
        raise UnknownImageError(
            f"unknown image '{name}': not in the catalog and not a rocm/pytorch or pytorch/pytorch tag",
            "did you mean: "
            + ", ".join(i.alias for i in near)
            + " ? (valorch images list shows all)",
        )

    def select(self, selectors: Iterable[str]) -> tuple[ImageSpec, ...]:
        """Images matching any selector: an alias/reference/tag, or a glob over aliases,
        or ``family:NAME`` / ``backend:NAME``."""
        chosen: dict[str, ImageSpec] = {}
        for sel in selectors:
            names: list[str] = []
            if sel.startswith(("family:", "backend:")):
                key, val = sel.split(":", 1)
                found = [i for i in self.images if getattr(i, key) == val]
                names = sorted({f"{key}:{getattr(i, key)}" for i in self.images})
            elif any(ch in sel for ch in "*?["):
                # a glob matches an alias or its short alias, as a name resolves either
                found = [
                    i
                    for i in self.images
                    if fnmatch.fnmatchcase(i.alias, sel)
                    or fnmatch.fnmatchcase(short_alias(i.alias), sel)
                ]
                names = [
                    n for i in self.images for n in dict.fromkeys((i.alias, short_alias(i.alias)))
                ]
            else:
                found = [self.resolve(sel)]
            if not found:
                near = yamlio.nearest(sel, names, 3)
                raise UnknownImageError(
                    f"image selector '{sel}' matches no image"
                    + (f"; did you mean {', '.join(near)}?" if near else ""),
                    "valorch images list shows the catalog",
                )
            for image in found:
                chosen.setdefault(image.alias, image)
        return tuple(chosen.values())


def validate_suites(suites: Iterable[Any]) -> None:
    """Every suite a flag names must exist in the probe's registry (a job spec's suites are
    checked with the rest of the file: ``jobcheck``)."""
    from ..checks_manifest import manifest

    known = manifest().suites
    for ref in suites:
        if ref.name not in known:
            raise SpecError(
                f"unknown suite '{ref.name}'{yamlio.did_you_mean(ref.name, known)}",
                "known suites: " + ", ".join(known),
            ) from None
        if undeclared := declares_nothing(ref):
            raise SpecError(*undeclared)


def validate_check_globs(suites: Iterable[Any], patterns: Iterable[str]) -> None:
    """Every ``--check`` glob must select a check of the suites run: a typo that selects
    nothing would store an empty run and turn a CI gate green."""
    refs = list(suites)
    ids = [i for ref in refs for i in suite_check_ids(ref)]
    names = ", ".join(ref.name for ref in refs)
    for pattern in patterns:
        why = glob_problem(pattern, ids, names)
        if why:
            raise SpecError(
                f"--check '{pattern}' {why.replace(' of suite ', ' of suite(s) ')}", GLOB_HINT
            )
