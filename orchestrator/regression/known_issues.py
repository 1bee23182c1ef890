"""Known issues: the file source of waivers (regression/waivers.py), a YAML list of failures
that are expected (``xfail``) until they expire. The store is the other source
(``valorch accept add``); both become the same ``Waiver`` and are decided the same way.

File shape (``known-issues.yaml``, or ``--known-issues FILE``)::

    issues:
      - check: "kernels.fft.*"          # glob on the check id
        images: "rocm6.3_*"             # glob on the image alias (default "*")
        backend: rocm                   # optional: only this backend
        arch: [gfx942, gfx90a]          # optional: only hosts with this GPU arch or family
                                        # (gfx94x, sm_9x: a family; cpu: no GPU)
        status: [fail, crash]           # the expected status(es); ``missing``: the check is not run
        reason: hipFFT plan cache leak on gfx942
        url: https://github.com/ROCm/hipFFT/issues/1  # http(s) only: it becomes a link
        expires: 2026-06-30             # after this date the entry excuses nothing

A bare top-level list of entries is accepted too.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timezone
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .. import encode, yamlio
from ..errors import SpecError
from .waivers import Waiver, Waivers

#: a GPU arch (gfx942, gfx90a, gfx1100, sm_90, sm_90a), a family (gfx94x, sm_9x), or cpu
ARCH = re.compile(r"^(?:gfx[0-9][0-9a-f]{1,3}|gfx[0-9]{1,3}x|sm_[0-9]{2,3}a?|sm_[0-9]{1,2}x|cpu)$")
#: the archs a scope may name: AMD's LLVM targets (the AMDGPU backend's processor table, which
#: ROCm's support matrices use) and NVIDIA's compute capabilities (the CUDA toolkit's sm_ list)
KNOWN_ARCHS = frozenset(
    (
        *("gfx803", "gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a", "gfx90c"),
        *("gfx940", "gfx941", "gfx942", "gfx950"),
        *(f"gfx{n}" for n in (*range(1010, 1014), *range(1030, 1037), *range(1100, 1104))),
        *(f"gfx{n}" for n in (*range(1150, 1154), 1200, 1201)),
        *("sm_35", "sm_37", "sm_50", "sm_52", "sm_53", "sm_60", "sm_61", "sm_62", "sm_70", "sm_72"),
        *("sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a"),
        *("sm_100", "sm_100a", "sm_101", "sm_101a", "sm_103", "sm_103a"),
        *("sm_110", "sm_120", "sm_120a", "sm_121", "cpu"),
    )
)


def known_arch(name: str) -> bool:
    """An arch of KNOWN_ARCHS, or a family (``gfx94x``, ``sm_9x``) that at least one names."""
    if not ARCH.match(name):
        return False
    if name.endswith("x"):
        return any(a.startswith(name[:-1]) for a in KNOWN_ARCHS)
    return name in KNOWN_ARCHS


#: ``error`` covers a tampered result; ``partial``/``unsupported``/``skip``/``missing`` (a check the
#: head did not run) cover lost coverage
Status = Literal["fail", "crash", "timeout", "error", "unsupported", "partial", "skip", "missing"]


class KnownIssue(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    check: str = Field(min_length=1)
    images: str = "*"
    backend: str | None = None
    status: tuple[Status, ...] = ("fail",)
    reason: str = Field(min_length=1)
    url: str = ""
    expires: date | None = None
    arch: tuple[str, ...] = ()  # GPU archs or families (gfx942, sm_90, gfx94x); () any

    @field_validator("arch", mode="before")
    @classmethod
    def _archs(cls, v: object) -> object:
        v = (v,) if isinstance(v, str) else v
        for a in v if isinstance(v, (list, tuple)) else ():
            if not isinstance(a, str) or not known_arch(a):
                raise ValueError(
                    f"unknown GPU arch '{a}': write an arch (gfx942, gfx90a, sm_90, sm_80), "
                    "a family ending in x (gfx94x, sm_9x) or cpu"
                )
        return v

    @field_validator("check", "images")
    @classmethod
    def _glob(cls, v: str) -> str:
        problem = glob_problem(v)
        if problem:
            raise ValueError(
                f"glob {v[:100]!r} {problem}: it would match nothing (globs use *, ? and "
                "[abc]; write [[] for a literal [)"
            )
        return v

    @field_validator("url")
    @classmethod
    def _http_url(cls, v: str) -> str:
        if v and encode.href(v) is None:
            raise ValueError(
                f"{v[:100]!r} is not an http:// or https:// link (a link is written into the "
                "HTML and Markdown reports: no other scheme, no spaces, quotes or credentials)"
            )
        return v

    @field_validator("status", mode="before")
    @classmethod
    def _one_or_many(cls, v: object) -> object:
        return (v,) if isinstance(v, str) else v

    def waiver(self, source: str = "") -> Waiver:
        """This entry as the one shape of a waiver (``source``: its file and line)."""
        return Waiver(**self.model_dump(exclude={"expires"}), until=self.expires, source=source)


def load(path: Path, now: datetime | None = None) -> Waivers:
    """The file's entries as waivers, each naming its file and line (``source``)."""
    doc = yamlio.load(path, "known-issues file")
    now = now or datetime.now(timezone.utc).replace(tzinfo=None)
    if doc.data is None:
        return Waivers((), now)
    prefix: tuple[str, ...]
    if isinstance(doc.data, list):
        items, prefix = doc.data, ()
    elif isinstance(doc.data, dict) and set(doc.data) <= {"issues"}:
        items, prefix = doc.data.get("issues") or [], ("issues",)
        if not isinstance(items, list):
            raise SpecError(
                f"{path}:{doc.line(('issues',))}: known issues: key 'issues' must be a list of entries"
            )
    else:
        extra = sorted(set(doc.data) - {"issues"}) if isinstance(doc.data, dict) else []
        what = f"unknown key '{extra[0]}'" if extra else "must be a list or a mapping with 'issues'"
        raise SpecError(
            f"{path}:{doc.line((extra[0],) if extra else ())}: known issues: {what}",
            "the file holds `issues:` followed by a list of entries (see jobs/known-issues.yaml)",
        )
    entries = tuple(
        yamlio.validate(doc.sub((*prefix, i)), KnownIssue, "known issue") for i in range(len(items))
    )
    waivers = tuple(
        e.waiver(f"{path}:{doc.sub((*prefix, i)).line(('check',))}") for i, e in enumerate(entries)
    )
    warnings = tuple(
        f"{w.source}: known issue: check '{w.check}' matches no check valorch knows "
        "(valorch suites show SUITE lists them); this entry excuses nothing"
        for w in waivers
        if not _names_a_check(w.check)
    )
    unscoped = tuple(
        f"{w.source}: known issue: '{w.check}' is not scoped (no images, backend or arch): "
        "it excuses the check on every image and GPU"
        for w in waivers
        if not w.scoped
    )
    return Waivers(waivers, now, warnings, unscoped)


def glob_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a glob fnmatch reads as written (an unclosed ``[``, a reversed
    range ``[z-a]``: fnmatch makes either match nothing or only itself), else None."""
    i = 0
    while i < len(pattern):
        if pattern[i] != "[":
            i += 1
            continue
        j = i + 1
        if j < len(pattern) and pattern[j] == "!":
            j += 1
        if j < len(pattern) and pattern[j] == "]":
            j += 1
        end = pattern.find("]", j)
        if end < 0:
            return f"has a [ at character {i + 1} that is never closed"
        body = pattern[i + 1 : end].lstrip("!")
        for k in range(1, len(body) - 1):
            if body[k] == "-" and body[k - 1] > body[k + 1]:
                return f"has a reversed range [{body[k - 1]}-{body[k + 1]}]"
        i = end + 1
    return None


#: checks a job declares (command.<id>, pytest.<test>) or a backend adds: no manifest names
#: them, so only a stored run can
DECLARED = ("command.", "pytest.", "inventory.", "tf.", "env.")


def _names_a_check(pattern: str) -> bool:
    """Whether a check glob matches any check id of the probe's registry (or a declared one)."""
    from ..checks_manifest import manifest

    if pattern.startswith(DECLARED) or any(ch in pattern.split(".", 1)[0] for ch in "*?["):
        return True
    return any(fnmatchcase(check_id, pattern) for check_id in manifest().checks)
