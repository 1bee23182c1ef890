"""The status vocabulary (docs/statuses.md), defined once: pure constants, no pydantic.

The matrix and a listing of runs count statuses without the job and result models of
``spec`` (which re-exports the ones other layers take from it), so that ``valorch results
list`` imports no model it never builds.
"""

from __future__ import annotations

STATUSES: tuple[str, ...] = (
    "pass",
    "partial",
    "fail",
    "crash",
    "timeout",
    "error",
    "unsupported",
    "skip",
    "n/a",
    "xfail",
)
#: the row does not apply to this image (another vendor's tool, a GPU row on a CPU image):
#: blank, and counted nowhere
NOT_APPLICABLE = "n/a"
#: ran and was wrong, or died: what gates a run (exit 1) and makes a regression
FAILING: tuple[str, ...] = ("fail", "crash", "timeout")
#: a verdict about the image (everything but the harness's own failure and deliberate skips)
DECISIVE: tuple[str, ...] = ("pass", "partial", *FAILING, "unsupported")
#: says nothing about the image: the harness failed, or attempts disagreed, or a known issue matched
INCONCLUSIVE: tuple[str, ...] = ("flaky", "xfail", "error")
#: not exercised, and no verdict about the image: JUnit ``<skipped>``, never FAILED in an
#: attestation, left out of tiers (docs/statuses.md)
NOT_EXERCISED: tuple[str, ...] = ("unsupported", "skip", NOT_APPLICABLE)
#: matrix cell symbols, one meaning each (docs/statuses.md): the seed documents' ✅ ⚠️ ❌ for
#: pass, partial support and failure; HTML adds a word and a colour
SYMBOL: dict[str, str] = {
    "pass": "✅",
    "partial": "⚠️",
    "fail": "❌",
    "crash": "❌",
    "timeout": "❌",
    "unsupported": "⊘",
    "error": "⁇",
    "xfail": "⚑",
    "flaky": "⁇",
    "skip": "",
    NOT_APPLICABLE: "",
    "missing": "—",
    "cpu-only": "◐",
}
LEGEND = (
    "✅ pass · ⚠️ partial support · ❌ fail, crash or timeout · ⊘ unsupported (not installed or "
    "does not exist: not a failure) · ⁇ inconclusive: harness error or flaky (mixed attempts) · "
    "⚑ waived · ◐ cpu only: passed on the CPU inside a GPU image (no GPU evidence) · "
    "blank: skipped or not applicable · —: not run"
)
