"""What an image holds: a gathered inventory of components, and version-prefix matching.

Frozen nouns at the bottom of the layers (beside spec.py): the store rebuilds them
from rows, audit compares them with the catalog, render writes them out, the matrix
reads versions with them. No I/O.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from .spec import Frozen

MAX_NAME = 200
MAX_VALUE = 500
MAX_EVIDENCE = 1_000
MAX_EXTRA = 50
MAX_COMPONENTS = 20_000
MAX_ERRORS = 200

Source = Literal["file", "dpkg", "pip", "header", "api", "command"]

UNPINNED = frozenset({"master", "main", "latest", "any", "*"})


class Component(Frozen):
    """One thing an image holds, with where the value came from."""

    name: str = Field(min_length=1, max_length=MAX_NAME)
    value: str = Field(max_length=MAX_VALUE)
    source: Source
    evidence: str = Field(default="", max_length=MAX_EVIDENCE)
    extra: dict[str, str] = Field(default_factory=dict, max_length=MAX_EXTRA)

    @field_validator("extra")
    @classmethod
    def _bounded_extra(cls, value: dict[str, str]) -> dict[str, str]:
        for k, v in value.items():
            if len(k) > MAX_NAME or len(v) > MAX_EVIDENCE:
                raise ValueError("extra entry %r is too long" % k[:40])
        return value

    @property
    def headline(self) -> bool:
        """Not a package listing (pip:..., deb:...)."""
        return ":" not in self.name


class Inventory(Frozen):
    components: tuple[Component, ...] = Field(default=(), max_length=MAX_COMPONENTS)
    host_facts: dict[str, str] = Field(default_factory=dict, max_length=MAX_EXTRA)
    errors: tuple[str, ...] = Field(default=(), max_length=MAX_ERRORS)

    @field_validator("components")
    @classmethod
    def _unique(cls, value: tuple[Component, ...]) -> tuple[Component, ...]:
        seen: set[str] = set()
        for comp in value:
            if comp.name in seen:
                raise ValueError("component %r appears twice" % comp.name)
            seen.add(comp.name)
        return value

    @field_validator("errors", mode="before")
    @classmethod
    def _error_text(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return tuple(str(e)[:MAX_EVIDENCE] for e in value)
        return value

    def get(self, name: str) -> Component | None:
        return next((c for c in self.components if c.name == name), None)

    def as_dict(self) -> dict[str, Component]:
        return {c.name: c for c in self.components}


def _tokens(version: str) -> list[int | str]:
    text = version.strip().lower()
    text = text[1:] if re.match(r"^v\d", text) else text
    return [int(t) if t.isdigit() else t for t in re.findall(r"\d+|[a-z]+", text)]


def version_matches(expected: str, found: str) -> bool:
    """Prefix semantics on version tokens: '3.12' accepts '3.12.8', '2.4.0' accepts
    '2.4.0+rocm6.3', '5.3-1.0.5.0' refuses '5.3-2.0.0.0', '3.1' refuses '3.12'."""
    want, got = _tokens(expected), _tokens(found)
    if not want:
        return expected.strip() == found.strip()
    return got[: len(want)] == want


_DEBIAN = re.compile(r"^(?:\d+:)?(?P<upstream>.+?)(?:-(?P<revision>[0-9A-Za-z.+~]+))?$")


def debian_upstream(version: str) -> tuple[str, str]:
    """A Debian package version's upstream part and its Debian revision, split one way
    (Debian Policy 5.6.12: ``[epoch:]upstream[-revision]``, the revision after the last
    hyphen): '1:1.24.2-1+deb12u1' -> ('1.24.2', '1+deb12u1'), '1.16.0+ds-5ubuntu1' ->
    ('1.16.0+ds', '5ubuntu1'), '6.3.0' -> ('6.3.0', '')."""
    m = _DEBIAN.match(version.strip())
    if not m:
        return version.strip(), ""
    return m.group("upstream"), m.group("revision") or ""


def release(text: str) -> tuple[list[int], str]:
    """A version's release numbers and pre-release tag: '1.13.0a0+git' → ([1, 13, 0], 'a0')."""
    m = re.match(r"^\s*v?(\d+(?:\.\d+)*)((?:a|b|rc|alpha|beta|dev|pre)\d*)?", text or "")
    if not m:
        return [], (text or "").strip()
    return [int(p) for p in m.group(1).split(".")], m.group(2) or ""


def same_release(a: str, b: str) -> bool:
    """Whether two version strings name one release: the numbers on the precision both give
    ('4.3.0' is ROCm's dpkg '4.3.0.60300', '1.13' is '1.13.1') and any pre-release tag
    ('1.13.0a0'), not a local or repack suffix ('+gitunknown', '+dfsg', '+cu124'):
    '1.13.1+dfsg' is '1.13.1', '1.13.0a0+gitunknown' is not '1.13.1'."""
    (x, tag_x), (y, tag_y) = release(a), release(b)
    n = min(len(x), len(y))
    return x[:n] == y[:n] and tag_x == tag_y and (bool(n) or a.strip() == b.strip())
