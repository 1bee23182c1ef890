"""One encoding per output sink (pure): what valorch did not write itself is encoded where
the sink is written, never at the sources.

Text from a workload, an image, an imported export, a job spec or a known-issues file is
untrusted. Each function takes any ``str`` (every code point, controls and lone surrogates
included) and returns text that is well-formed for its sink and carries no markup,
escape sequence, mention or link of the input's making; each function's docstring says
what it does for its sink.
"""

from __future__ import annotations

import functools
import json as _json
import re
from typing import Any

# C0 except \t \n, DEL, C1, bidi embeddings/overrides/isolates (Trojan Source), lone surrogates
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
#: what XML 1.0 forbids: compiled on first use (``re`` takes ~10 ms over its ranges, which
#: every command would pay at start-up; only JUnit writes XML)
_XML_FORBIDDEN = "[^\x09\x0a\x0d\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
_RST_SPECIAL = re.compile(r"([\\`*_|\[\]<>:@])")  # @: no standalone e-mail link
_MENTION = re.compile(r"@(?=(?:here|channel|everyone|group)\b)", re.IGNORECASE)
_SCHEME = re.compile(r"(?<=[A-Za-z0-9+.-]):(?=//)")
ZWSP = "\u200b"
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")


def visible(ch: str) -> str:
    """The visible stand-in of one unsafe character."""
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟ (Unicode's Control Pictures)
    if code == 0x7F:
        return "\u2421"  # ␡
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal(text: str) -> str:
    """Controls other than newline and tab, DEL, bidirectional overrides and lone surrogates made
    visible (ESC → ``␛``): no escape sequence (OSC 52 clipboard writes, CSI 2J, OSC 8 links)."""
    return _UNSAFE.sub(lambda m: visible(m.group(0)), text)


def one_line(text: str) -> str:
    """Controls visible, newlines and tabs as spaces."""
    return terminal(text).replace("\n", " ").replace("\t", " ")


def html(text: str) -> str:
    """HTML-escaped, quotes included; controls visible."""
    # the standard library's html module builds its table of 2,200 named entities at
    # import: paid by the sinks that escape HTML, not by every command's start-up
    from html import escape

    return escape(terminal(text), quote=True)


# Where ``<``, ``&`` and ``>`` could make markup: a tag, comment, declaration or autolink
# (``<`` before a letter, ``/``, ``!`` or ``?``), a character reference (``&name;``,
# ``&#…;``), a block quote (``>`` first on a line). There they are backslash-escaped (a
# CommonMark escape: the character shown literally); anywhere else they are literal text
# and stay as they are, so "experimental > 0% pass" reads the same in a terminal.
_MD_MARKUP = re.compile(r"<(?=[A-Za-z/!?])|&(?=#?[A-Za-z0-9]+;)|^([ \t]*)>", re.MULTILINE)


def github_markdown(text: str) -> str:
    """Markdown GitHub renders: no raw HTML, no link, image or autolink from the input. The
    characters that could make markup are backslash-escaped, not entities, and quotes are
    left as they are: the same text reads right in a terminal ("test[1]", ".to('cuda')",
    "a > b"), where no entity is decoded."""
    out = terminal(text).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    return _MD_MARKUP.sub(
        lambda m: f"{m.group(1)}\\>" if m.group(1) is not None else "\\" + m.group(0), out
    )


def markdown_code(text: str) -> str:
    """A Markdown code span (in a table cell) of ``text``: literal, so nothing is encoded
    but the pipe (a table's column separator) and the fence, longer than any run of
    backticks in the text; controls visible, one line."""
    body = one_line(text)
    longest = max((len(m) for m in re.findall("`+", body)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{fence}{pad}{body}{pad}{fence}".replace("|", "\\|")


def markdown(text: str) -> str:
    """A GitHub-flavoured Markdown table cell (or heading/list item): one line."""
    return github_markdown(text.replace("\r", " ").replace("\n", " ").replace("\t", " ")).replace(
        "|", "\\|"
    )


def rst(text: str) -> str:
    """RST inline text: markup characters escaped, one line."""
    return _RST_SPECIAL.sub(r"\\\1", " ".join(one_line(text).split()))


def xml(text: str) -> str:
    """Characters XML 1.0 forbids (and C1 controls) made visible; the escaping of ``<&"``
    stays the serializer's (ElementTree)."""
    return _xml_forbidden().sub(lambda m: visible(m.group(0)), text)


@functools.cache
def _xml_forbidden() -> re.Pattern[str]:
    return re.compile(_XML_FORBIDDEN)


def slack(text: str) -> str:
    """Slack mrkdwn: the three characters Slack asks to escape, mentions and links defused."""
    text = terminal(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SCHEME.sub(":" + ZWSP, _MENTION.sub("@" + ZWSP, text))


def json(obj: Any, **kw: Any) -> str:
    """JSON with every non-ASCII character (and every control) escaped."""
    return _json.dumps(obj, ensure_ascii=True, **kw)


def url(value: str) -> str:
    """A URL with its credentials (user name and password) removed, fit to print or log;
    works on URLs that do not parse too (the userinfo is what precedes the authority's last @)."""
    return terminal(_USERINFO.sub(r"\1***@", value))


#: the longest link valorch writes (browsers take more; nobody types more)
MAX_URL = 2_000
_URL_UNSAFE = re.compile(r"[\x00-\x20\x7f-\x9f<>\"'`\\|{}^]")


def href(value: object) -> str | None:
    """``value`` when it is an absolute ``http``/``https`` URL with a host, no credentials,
    no whitespace, control or quote character and at most MAX_URL characters; else None.
    The one check of every link valorch writes from a user's text (a known issue's url):
    models validate with it, templates and renderers link only what it returns."""
    from urllib.parse import urlsplit

    if not isinstance(value, str) or not value or len(value) > MAX_URL:
        return None
    if _URL_UNSAFE.search(value) or not value.isascii():
        return None
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018  # raises ValueError on a port that is not a number
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or "@" in parts.netloc:
        return None
    return value


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def well_formed(value: Any) -> Any:
    """Decoded JSON with every lone surrogate (JSON may escape one: ``"\\ud800"``) replaced by
    U+FFFD in its strings and keys, as a decoder does with bytes it cannot read: no
    UTF-8 sink (the store, a file, a terminal) can hold one, so one bad string would cost
    the whole record where it now costs its characters."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [well_formed(v) for v in value]
    if isinstance(value, dict):
        return {well_formed(k): well_formed(v) for k, v in value.items()}
    return value
