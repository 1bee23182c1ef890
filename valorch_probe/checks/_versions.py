"""Version facts read inside the image and the catalog's prefix semantics."""

from __future__ import annotations

import contextlib
import re
from typing import Dict, Optional, Tuple

from .. import read_text

_RELEASE = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")


def release(text: str) -> Optional[Tuple[int, ...]]:
    """The leading numeric release of a version: '2.4.0a0+git1' -> (2, 4, 0)."""
    m = _RELEASE.match(text or "")
    return tuple(int(p) for p in m.group(1).split(".")) if m else None


def matches(expected: str, found: Optional[str]) -> bool:
    """Prefix semantics: '3.12' accepts '3.12.8'; 'master' means unpinned."""
    if expected.strip().lower() in ("master", "main", "any", "*"):
        return found is not None
    if found is None:
        return False
    want, got = release(expected), release(found)
    if want is None or got is None:
        return expected.strip() == found.strip()
    return got[: len(want)] == want


_PRE = re.compile(r"^\s*v?\d+(?:\.\d+)*[.-]?((?:a|b|rc|c|alpha|beta|pre|preview|dev)\.?\d*)", re.I)
_DEV = re.compile(r"[.-]?(dev\d*)", re.I)
_GIT = re.compile(r"\+(git[0-9A-Za-z.]*)", re.I)


def prerelease(found: Optional[str]) -> Optional[str]:
    """What makes a version a pre-release or a local build, or None for a release:
    '1.13.0a0+gitunknown' -> 'pre-release 1.13.0a0, local build from git (+gitunknown)'.
    Official local labels of a release (+cpu, +cu121, +rocm6.3) are not flagged."""
    if not found:
        return None
    notes = []
    if _PRE.match(found):
        notes.append("pre-release %s" % found.split("+")[0])
    elif _DEV.search(found.split("+")[0]):
        notes.append("development build %s" % found.split("+")[0])
    g = _GIT.search(found)
    if g:
        notes.append("local build from git (+%s)" % g.group(1))
    return ", ".join(notes) or None


def prefix_warning(expected: str, found: Optional[str]) -> Optional[str]:
    """The warning for a pre-release or local build that matches an expected
    version only by prefix ("1.13" accepting "1.13.0a0+gitunknown"); None when the
    match is a release (or there is no match). Shared with `inventory audit`."""
    if found is None or not matches(expected, found):
        return None
    if expected.strip().lower() in ("master", "main", "any", "*"):
        return None
    note = prerelease(found)
    if note is None or found.strip() == expected.strip():
        return None
    return "warning: %s matches %s only by prefix: %s" % (found, expected, note)


def os_release(path: str = "/etc/os-release") -> Dict[str, str]:
    pairs = (line.split("=", 1) for line in read_text(path).splitlines() if "=" in line)
    return {k: v.strip().strip('"') for k, v in pairs}


def rocm_release() -> Optional[str]:
    import glob

    for path in sorted(glob.glob("/opt/rocm*/.info/version")):
        with contextlib.suppress(OSError), open(path) as fh:
            return fh.read().strip()
    return None
