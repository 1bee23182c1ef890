"""Where a long name may wrap in HTML: after its separators, never inside a part (the
site's pages and the diff report's HTML both use it)."""

from __future__ import annotations

import functools
import re

from markupsafe import Markup, escape

_SEPARATOR = re.compile(r"(?<=[_/:@])")


def breakable(name: str) -> Markup:
    """A name that may wrap only after its separators (``_ / : @``), never inside a part:
    ``cpu_debian12_py3.11_pytorch`` can break before ``py3.11`` but never as ``py / 3.11``."""
    parts = [p for p in _SEPARATOR.split(name) if p]
    return Markup("<wbr>".join(f'<span class="tok">{escape(p)}</span>' for p in parts))


_WBR = re.compile(r"([_/:@])|\.(?=[A-Za-z])")


@functools.lru_cache(maxsize=65536)  # check ids and aliases repeat on every run page
def wbr(text: str) -> Markup:
    """``text`` escaped, with a line-break opportunity after each ``_ / : @`` and after a dot
    that a letter follows: a long id (``torch.backends.cuda.matmul.allow_fp16_…``) wraps
    between its parts, never at a letter nor inside a version (``py3.11``, ``2.13``)."""
    return Markup(_WBR.sub(lambda m: f"{m.group(0)}<wbr>", str(escape(text))))
