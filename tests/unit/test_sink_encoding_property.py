"""Every output sink encodes what valorch did not write: random strings (every code point,
controls and lone surrogates included) through every field each sink shows, and the output
is well-formed for its format (orchestrator/encode.py, applied where each sink is written)."""

from __future__ import annotations

import io
import json
import re
from datetime import datetime, timezone
from html.parser import HTMLParser
from types import SimpleNamespace
from xml.etree import ElementTree as ET

import docutils.frontend
import docutils.nodes
import docutils.parsers.rst
import docutils.utils
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from rich.table import Table as RichTable

from orchestrator import encode
from orchestrator.commands.common import SafeConsole
from orchestrator.ext.notify import message
from orchestrator.matrix.document import Document, Header, Table, TCell, TRow
from orchestrator.render.html import document_html
from orchestrator.render.junit import error_junit, results_junit
from orchestrator.render.markdown import document_md
from orchestrator.render.rst import document_rst

# every code point (surrogates too), with the dangerous ones made likely
DANGER = st.sampled_from(
    [
        "\x1b",
        "\x07",
        "\x9b",
        "\x00",
        "\r",
        "\n",
        "\t",
        "\x7f",
        "\u202e",
        "\ud800",
        "<",
        ">",
        "&",
        "|",
        "[",
        "]",
        "`",
        "*",
        "_",
        ":",
        "\\",
        '"',
        "'",
        "@",
        "!",
        "(",
        ")",
        "/",
    ]
)
CHUNK = st.one_of(
    st.text(st.characters(codec=None, categories=None), max_size=6),
    DANGER,
    st.sampled_from(
        [
            "<script>alert(1)</script>",
            "<iframe src=javascript:alert(1)>",
            "<svg onload=alert(1)>",
            "\x1b]52;c;aGk=\x07",
            "\x1b[2J",
            "\x1b]8;;http://e\x1b\\x",
            "<!channel>",
            "<http://evil.example|Click>",
            "@here",
            "<@U123>",
            "[x](http://e)",
            "![i](http://e/p.png)",
            "http://evil.example",
            "`literal`",
            "[link=http://e]y[/link]",
            "[/bold]",
            "&lt;",
            "]]>",
            "<!--",
            "javascript:x",
        ]
    ),
)
TEXT = st.lists(CHUNK, max_size=6).map("".join)
BUDGET = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _doc(t: list[str]) -> Document:
    cells = (
        TCell(t[0], "pass", ("pass",), ("run-1",), note=t[1]),
        TCell(t[2], "fail", ("fail",), ("run-2",)),
    )
    return Document(
        Header(t[3], "2026-01-04", (t[4], "valorch 0.1.0")),
        Table(
            "checks",
            t[5],
            (t[6], "Feature"),
            (t[7], "img2"),
            (TRow(t[8], (t[8], t[9]), cells),),
            (t[10],),
            1,
        ),
    )


DOC_TEXTS = st.lists(TEXT, min_size=11, max_size=11)


# --- terminal -------------------------------------------------------------------------------------

SGR = re.compile(r"\x1b\[[0-9;]*m")  # the only escape sequences valorch's console emits: styles
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@BUDGET
@given(TEXT, TEXT)
def test_terminal_has_no_escape_sequence_valorch_did_not_emit(a, b):
    console = SafeConsole(
        file=io.StringIO(), force_terminal=True, color_system="truecolor", width=120
    )
    console.print(f"[bold]run {a}[/bold] {b}")  # a message built with valorch's own markup
    console.print(a, markup=False)
    table = RichTable("check", "message")
    table.add_row(a, b)
    console.print(table)
    shown = SGR.sub("", console.file.getvalue())
    assert not CONTROL.search(shown), repr(shown)
    assert not re.search("[\ud800-\udfff]", shown)
    shown.encode("utf-8")  # printable to any UTF-8 terminal


@BUDGET
@given(TEXT)
def test_terminal_encoder_keeps_newlines_and_tabs_and_printable_text(a):
    out = encode.terminal(a)
    assert not CONTROL.search(out)
    assert out.count("\n") == a.count("\n") and out.count("\t") == a.count("\t")
    plain = "".join(ch for ch in a if not encode._UNSAFE.match(ch))
    assert encode.terminal(plain) == plain  # printable text is left as it is


# --- JUnit XML ------------------------------------------------------------------------------------


@BUDGET
@given(st.lists(TEXT, min_size=6, max_size=6))
def test_junit_parses_whatever_the_workload_printed(t):
    run = SimpleNamespace(
        id="run-1",
        image=SimpleNamespace(alias=t[0]),
        host=SimpleNamespace(name=t[1]),
        started=datetime(2026, 1, 1, tzinfo=timezone.utc),
    )
    results = [
        SimpleNamespace(
            check=SimpleNamespace(check_id=f"s.{t[2]}"),
            attempt=1,
            status=status,
            duration_s=0.5,
            message=t[3],
            log=t[4],
        )
        for status in ("fail", "error", "skip")
    ]
    for xml in (
        results_junit([run], {"run-1": results}, {"run-1": [t[5]]}),
        error_junit(t[3], t[4]),
    ):
        root = ET.fromstring(xml.encode("utf-8"))
        assert root.tag == "testsuites"


# --- Markdown -------------------------------------------------------------------------------------


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, tuple[str, ...]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, tuple(sorted(a for a, _ in attrs))))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)


def _tags(html: str) -> list[tuple[str, tuple[str, ...]]]:
    parser = _Tags()
    parser.feed(html)
    parser.close()
    return parser.tags


MD = MarkdownIt("commonmark", {"html": True}).enable("table")
# Markdown's own elements (input may format text: a heading, a list, code) but no raw HTML tag
# and no link or image: an <a>, <img>, <script>, <iframe>, <svg> … can only come from raw input
MD_ALLOWED = {
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "p",
    "ul",
    "ol",
    "li",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "code",
    "pre",
    "em",
    "strong",
    "br",
    "hr",
    "blockquote",
}
MD_ATTRS = {"style", "start", "class"}  # alignment, a list's first number, a fence's language


@BUDGET
@given(DOC_TEXTS)
def test_markdown_has_no_raw_tag_link_or_image_from_the_input(t):
    md = document_md(_doc(t))
    tags = _tags(MD.render(md))
    assert {tag for tag, _ in tags} <= MD_ALLOWED, tags
    assert all(set(attrs) <= MD_ATTRS for _, attrs in tags), tags
    assert not CONTROL.search(md)


@BUDGET
@given(TEXT)
def test_github_markdown_keeps_lines_and_makes_no_element(a):
    out = encode.github_markdown(a)
    assert out.count("\n") == a.count("\n")
    assert {tag for tag, _ in _tags(MD.render(out))} <= MD_ALLOWED


# --- RST ------------------------------------------------------------------------------------------


def _rst(text: str):
    settings_ = docutils.frontend.get_default_settings(docutils.parsers.rst.Parser)
    settings_.report_level = 5
    doc = docutils.utils.new_document("<matrix>", settings_)
    messages = []
    doc.reporter.attach_observer(messages.append)
    docutils.parsers.rst.Parser().parse(text, doc)
    return doc, messages


@BUDGET
@given(DOC_TEXTS)
# a title whose characters docutils counts as two columns each (found by this test in CI)
@example(
    ["", "", "", "", "", "\u0e5c00\x80\x800000\x80" + "<script>alert(1)</script>" * 2] + [""] * 5
)
@example(["", "", "", "", "", "\u30ab" * 60 + "e\u0301" * 10] + [""] * 5)
def test_rst_parses_cleanly_with_no_link_or_markup_from_the_input(t):
    doc, messages = _rst(document_rst(_doc(t)))
    assert [m for m in messages if m["level"] >= 2] == []
    assert not list(doc.findall(docutils.nodes.reference)), "a link from the input"
    assert not list(doc.findall(docutils.nodes.raw))


# --- HTML -----------------------------------------------------------------------------------------


# HTML's markup characters: without them text can start no element and leave no quoted
# attribute, so the page's structure is valorch's own, text-dependent parts included (a <wbr>
# after a name's separator, a badge for a legend symbol, a section's heading)
INERT = str.maketrans(dict.fromkeys("<>&\"'", "0"))


@BUDGET
@given(DOC_TEXTS)
# markup valorch writes from the text: a <wbr> after a label's separator (found by this test
# in CI), a header's parts, a section's heading, a legend symbol's badge
@example(["0"] * 9 + ["_", "0"])
@example(["", "\u2705", "", "", "", "", "Section", "c:d@e", "x.y", "p/q_r", "\u2705 \u274c"])
def test_html_has_no_element_or_attribute_from_the_input(t):
    for fragment in (False, True):  # same structure as the document with its markup made inert
        tags = _tags(document_html(_doc(t), fragment))
        assert tags == _tags(document_html(_doc([x.translate(INERT) for x in t]), fragment))
    names = {tag for tag, _ in tags}
    assert not names & {"script", "iframe", "svg", "img", "object", "embed"}
    assert not any(a.startswith("on") for _, attrs in tags for a in attrs)


# --- Slack and GitHub -----------------------------------------------------------------------------

MENTION_OR_LINK = re.compile(
    r"<[!@#]|<[a-z]+:|\|[^>]*>|(?<![\w])@(here|channel|everyone)\b|[a-z]+://", re.I
)


@BUDGET
@given(st.lists(TEXT, min_size=6, max_size=6))
def test_slack_has_no_mention_or_link_from_the_input(t):
    outcome = message.Outcome(
        title=t[0],
        results=3,
        summary=t[1],
        regressions=(message.Regression(t[2], t[3], t[4], t[5]),),
    )
    body = message.slack(outcome)
    for text in (body["text"], body["blocks"][0]["text"]["text"]):
        assert not MENTION_OR_LINK.search(text), text
        assert "<" not in text and ">" not in text
        assert not CONTROL.search(text)
    json.loads(encode.json(body))


@BUDGET
@given(st.lists(TEXT, min_size=6, max_size=6))
def test_github_check_run_has_no_element_from_the_input(t):
    outcome = message.Outcome(
        title=t[0],
        results=3,
        summary=t[1],
        regressions=(message.Regression(t[2], t[3], t[4], t[5]),),
    )
    out = message.github(outcome, "0" * 40)["output"]
    for field in ("summary", "text"):
        assert {tag for tag, _ in _tags(MD.render(out[field]))} <= MD_ALLOWED
    assert not CONTROL.search(out["title"]) and "\n" not in out["title"]


# --- JSON and URLs --------------------------------------------------------------------------------


@BUDGET
@given(TEXT)
def test_json_round_trips_and_is_ascii(a):
    text = encode.json({"message": a})
    assert text.isascii() and json.loads(text) == {"message": a}


@BUDGET
@given(
    st.text(st.characters(codec="ascii", exclude_characters="@/?#[]"), min_size=1, max_size=12),
    st.sampled_from(["http", "https", "postgresql", "redis", "ftp"]),
)
def test_a_printed_url_has_no_credentials(secret, scheme):
    shown = encode.url(f"{scheme}://user:{secret}pw@host.example:8080/path")
    assert f"{secret}pw" not in shown and "user" not in shown
    assert "host.example" in shown or shown == "<unparsable URL>"


# --- CycloneDX ------------------------------------------------------------------------------------


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(TEXT, min_size=4, max_size=4))
def test_cyclonedx_is_json_that_round_trips_what_the_image_said(t):
    from orchestrator import audit
    from orchestrator.ext.sbom import render as sbom

    inv = audit.parse_inventory(
        {
            "components": [
                {
                    "name": "os",
                    "value": "debian 12",
                    "source": "file",
                    "evidence": "/etc/os-release",
                },
                {
                    "name": "pip:x" + t[0][:40],
                    "value": t[1][:40] or "1",
                    "source": "pip",
                    "evidence": t[2][:80],
                    "extra": {"license": t[3][:40]},
                },
            ]
        }
    )
    text = sbom.bom_json(inv, "valorch/test:pip-torch")
    assert not CONTROL.search(text)  # every control escaped inside JSON strings
    doc = json.loads(text)
    assert doc["bomFormat"] == "CycloneDX"
