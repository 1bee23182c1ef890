"""Status badges for HTML: a word, a colour and an inline SVG icon, so that no
verdict depends on an emoji font (CI runners often have none).
Markdown and RST keep the seeds' ✅ ⚠️ ❌ (and spec.SYMBOL's others, one meaning each)."""

from __future__ import annotations

import re

from markupsafe import Markup, escape

GOOD, BAD, WARN, NONE, INFO = "good", "bad", "warn", "none", "info"
# each tone's statuses, verdicts, layout states and change kinds ("unsupported" is not
# installed or does not exist: not a failure of the image; a tier named so is)
TONE = {
    status: tone
    for tone, said in (
        (GOOD, "pass, ok, first-class, fixed, faster, improved"),
        (BAD, "fail, crash, timeout, drift, broken, unsupported-tier, regressed, new_failure"),
        (BAD, "slower, coverage_lost, step, drift-slower"),
        (WARN, "error, xfail, flaky, partial, unpinned, best-effort, experimental, noise"),
        (WARN, "inconclusive, expected, noisy host"),
        (NONE, "unsupported, skip, n/a, missing, no-inventory, catalog, absent, too few runs"),
        (NONE, "not_comparable, same"),
        (INFO, "cpu-only, measured, coverage_gained, changed"),
    )
    for status in said.split(", ")
}
WORD = {
    "missing": "not run",
    "noise": "~ not significant",
    "xfail": "waived",
    "error": "inconclusive",
    "same": "unchanged",
    "cpu-only": "cpu only",
    "absent": "not found",
    "no-inventory": "no inventory",
    "n/a": "not applicable",
    "unsupported-tier": "unsupported",
}
_ICON = {
    GOOD: '<path d="M3 6.5l2 2 4-5" fill="none" stroke="#fff" stroke-width="1.8"/>',
    BAD: '<path d="M3.5 3.5l5 5M8.5 3.5l-5 5" stroke="#fff" stroke-width="1.8"/>',
    WARN: '<path d="M6 2.5v4.5M6 8.6v1" stroke="#fff" stroke-width="1.8"/>',
    NONE: '<path d="M3 6h6" stroke="#fff" stroke-width="1.8"/>',
    INFO: '<path d="M6 5v4.5M6 2.4v1" stroke="#fff" stroke-width="1.8"/>',
}
_FILL = {GOOD: "#1a7f37", BAD: "#c62828", WARN: "#b26a00", NONE: "#8a8f98", INFO: "#1f5fbf"}
EMOJI = re.compile("[\u2705\u274c\u26a0\ufe0f\U0001f532\u2298\u2047\u2691\u25d0]")


def _data_uri(t: str) -> str:
    svg = (
        (
            f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 12 12'><circle cx='6' cy='6' r='6' "
            f"fill='{_FILL[t]}'/>{_ICON[t]}</svg>"
        )
        .replace('"', "'")
        .replace("#", "%23")
    )
    return f'url("data:image/svg+xml;utf8,{svg}")'


# The icon is an inline SVG defined once per page (a data: URI in the stylesheet, no
# request): a page of 300 results stays small, and still needs no emoji font.
CSS_TEXT = """
.badge { display: inline-flex; align-items: center; gap: 0.25em; padding: 0.05em 0.45em 0.05em 0.25em;
  border-radius: 0.7em; font-size: 0.82em; font-weight: 600; white-space: nowrap; line-height: 1.4; }
.badge::before { content: ""; width: 1em; height: 1em; flex: none; background-repeat: no-repeat; }
.badge.good { background: #dcf2e3; color: #0d5a24; } .badge.bad { background: #fbe0e0; color: #8e1616; }
.badge.warn { background: #fdefd3; color: #6e4300; } .badge.none { background: #eceef1; color: #4a4f57; }
.badge.info { background: #dde8fa; color: #143f80; }
""" + "".join(f".badge.{t}::before {{ background-image: {_data_uri(t)}; }}\n" for t in _FILL)
CSS = Markup(CSS_TEXT)  # trusted: made here, inserted unescaped into <style>


def tone(status: str) -> str:
    return TONE.get(status, INFO)


def badge(status: str, word: str | None = None) -> Markup:
    """``<span class="badge bad" data-status="fail">fail</span>``: readable without colour
    (the word) and without an emoji font (the icon is an SVG from the stylesheet, see CSS)."""
    t = tone(status)
    text = word if word is not None else WORD.get(status, status.replace("_", " "))
    return Markup(f'<span class="badge {t}" data-status="{escape(status)}">{escape(text)}</span>')


def cell_html(text: str, verdict: str) -> Markup:
    """A matrix cell: the badge alone where the text only repeated the verdict with a
    symbol, else the text (symbols removed) followed by the badge."""
    plain = EMOJI.sub("", text).strip()
    if not verdict:
        return escape(plain)
    if plain in ("", verdict, "—", WORD.get(verdict)):
        return badge(verdict)
    return Markup(f"{escape(plain)} {badge(verdict)}")


# each symbol of the legend as the badge its cells show (spec.SYMBOL: one meaning each)
_SYMBOL_BADGE = {
    "\u2705": ("pass", "pass"),
    "\u274c": ("fail", "fail"),
    "\u26a0\ufe0f": ("partial", "partial"),
    "\u26a0": ("partial", "partial"),
    "\u2298": ("unsupported", "unsupported"),
    "\u2047": ("error", "inconclusive"),
    "\u2691": ("xfail", "waived"),
    "\u25d0": ("cpu-only", "cpu only"),
}


def note_html(text: str) -> Markup:
    """A legend or note with its emoji symbols replaced by badges."""
    out = escape(text)
    for sym, (status, word) in _SYMBOL_BADGE.items():
        out = Markup(out.replace(sym, badge(status, word)))
    return out
