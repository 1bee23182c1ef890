"""Version facts read inside the image and the catalog's prefix semantics."""

from __future__ import annotations

import re
from typing import Dict, Optional, Tuple

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


def os_release(path: str = "/etc/os-release") -> Dict[str, str]:
    facts = {}  # type: Dict[str, str]
    try:
        with open(path) as fh:
            for line in fh:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    facts[k] = v.strip().strip('"')
    except OSError:
        pass
    return facts


def rocm_release() -> Optional[str]:
    import glob

    for path in sorted(glob.glob("/opt/rocm*/.info/version")):
        try:
            with open(path) as fh:
                return fh.read().strip()
        except OSError:
            continue
    return None
