"""Scrubbing recorded GPU tool output before it becomes a fixture (pure): serial numbers,
UUIDs and host names are replaced, everything else is kept byte for byte.

What is recognised: UUIDs in any of the tools' spellings (nvidia-smi's and amd-smi's
``GPU-…``/plain 8-4-4-4-12, rocminfo's ``GPU-<16 hex>``), the value of any field whose name
says serial / UUID / unique id (JSON keys, ``nvidia-smi -q -x`` tags, ``KEY: value`` lines),
and the host names given."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

SCRUBBED = "SCRUBBED"
_UUID = re.compile(
    r"\b(GPU-|MIG-)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
)
_SHORT_GPU_ID = re.compile(r"\bGPU-[0-9a-fA-F]{16}\b")
_ID_NAME = r"[^\"<>\n:=]*(?:serial|uuid|unique[ _]?id|guid)[^\"<>\n:=]*"
_JSON_FIELD = re.compile(r'("%s"\s*:\s*)("(?:[^"\\]|\\.)*"|\d+)' % _ID_NAME, re.I)
_XML_FIELD = re.compile(r"<(%s)>([^<]*)</\1>" % _ID_NAME.replace(r"[^\"<>\n:=]*", r"[\w.]*"), re.I)
_LINE_FIELD = re.compile(
    r"^(\s*%s\s*[:=]\s*)(\S.*?)\s*$" % _ID_NAME.replace(r"[^\"<>\n:=]*", r"[\w .()-]*"), re.I | re.M
)
_REPR_FIELD = re.compile(r"\b(uuid=)([0-9a-fA-F-]{8,})")


def scrub(text: str, hostnames: Iterable[str] = ()) -> tuple[str, int]:
    """``text`` with identifiers replaced, and how many replacements were made."""
    count = 0

    def sub(rx: re.Pattern[str], repl: str | Callable[[re.Match[str]], str], s: str) -> str:
        nonlocal count
        s, n = rx.subn(repl, s)
        count += n
        return s

    text = sub(_JSON_FIELD, lambda m: m.group(1) + ('"%s"' % SCRUBBED), text)
    text = sub(_XML_FIELD, lambda m: "<%s>%s</%s>" % (m.group(1), SCRUBBED, m.group(1)), text)
    text = sub(_LINE_FIELD, lambda m: m.group(1) + SCRUBBED, text)
    text = sub(_REPR_FIELD, lambda m: m.group(1) + SCRUBBED, text)
    text = sub(_UUID, lambda m: (m.group(1) or "") + "00000000-0000-0000-0000-000000000000", text)
    text = sub(_SHORT_GPU_ID, lambda m: "GPU-0000000000000000", text)
    for name in sorted({h for h in hostnames if h and len(h) > 2}, key=len, reverse=True):
        text = sub(
            re.compile(r"(?<![\w.-])%s(?![\w-])" % re.escape(name)), lambda m: "recorded-host", text
        )
    return text, count
