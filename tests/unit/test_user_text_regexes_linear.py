"""Every regular expression import-rst applies to a page's text runs in linear time: each is
fed adversarial strings of 256 kB built for backtracking (long runs of the characters
its quantifiers take, with no closing character), and must finish well inside an alarm that
a quadratic one (10**11 steps at this size) could never meet. Before: `_LINK` on spaces,
`_REF` on "a.a.a…" and the tag stripper on "<<<…" took 49 s on a 120 kB cell."""

from __future__ import annotations

import contextlib
import signal

import pytest

from orchestrator.catalog import rst_table

SIZE = 1 << 18  # a quadratic regex: ~10**11 steps here
ADVERSARIAL = {
    "spaces after a backtick": "`" + " " * SIZE,
    "backtick runs": "`a" * (SIZE // 2),
    "unclosed angle": "`a <" + "b" * SIZE,
    "name characters with dots": "a." * (SIZE // 2),
    "name characters then slash": "a-" * (SIZE // 2) + "/",
    "open angles": "<" * SIZE,
    "stars": "*a" * (SIZE // 2),
    "double stars": "**a" * (SIZE // 3),
    "double backticks": "``a" * (SIZE // 3),
    "pipes": "|a" * (SIZE // 2),
    "footnotes": "[" * SIZE,
    "roles": ":a:`" * (SIZE // 4),
    "layer urls": "/layers/a/b/c/images/sha256-" * (SIZE // 30),
    "dashes": "-." * (SIZE // 2),
}


class _TooSlowError(Exception):
    pass


def _alarm(_signum, _frame):
    raise _TooSlowError


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_every_cell_regex_is_linear_on_adversarial_text(text):
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(20)
    try:
        cleaned = rst_table.clean(text)
        rst_table.image_of(text)
        rst_table.header_key(text)
        with contextlib.suppress(rst_table.RstImportError):  # markup left: refused, fine
            rst_table.check_cell(cleaned, text, "page.rst:1")
        rst_table.list_tables(".. list-table::\n   :header-rows: 1\n\n   * - " + text + "\n")
    except _TooSlowError:
        pytest.fail("a regular expression backtracked (not linear in the cell's length)")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
