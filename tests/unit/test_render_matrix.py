import docutils.frontend
import docutils.nodes
import docutils.parsers.rst
import docutils.utils

from orchestrator.matrix.document import Document, Header, Table, TCell, TRow
from orchestrator.render.html import document_html
from orchestrator.render.markdown import document_md
from orchestrator.render.rst import document_rst

DOC = Document(
    Header("v0.3", "2026-01-04", ("results database sqlite:///x", "valorch 0.1.0")),
    Table(
        "checks",
        "Checks by image",
        ("Check", "Feature", "Library"),
        ("img|1", "img2"),
        (
            TRow(
                "k.a",
                ("k.a", "a | b <script>alert(1)</script>", "hipBLAS/cuBLAS"),
                (
                    TCell("✅", "pass", ("pass",), ("run-1",)),
                    TCell("❌ fail", "fail", ("fail",), ("run-2",)),
                ),
            ),
            TRow(
                "k_b*",
                ("k_b*", "`tick` *star* _u_", ""),
                (TCell("", "skip"), TCell("⁇ flaky", "flaky", ("fail", "pass"), ("run-3",))),
            ),
        ),
        ("Legend: ✅ pass",),
        1,
    ),
)


def _parse(text):
    settings = docutils.frontend.get_default_settings(docutils.parsers.rst.Parser)
    settings.report_level = 5
    doc = docutils.utils.new_document("<matrix>", settings)
    messages = []
    doc.reporter.attach_observer(messages.append)
    docutils.parsers.rst.Parser().parse(text, doc)
    return doc, messages


def test_rst_is_a_valid_list_table():
    text = document_rst(DOC)
    assert ".. list-table:: Checks by image\n    :header-rows: 1\n" in text
    assert "    * - Check\n      - Feature\n" in text and "    * - ``k.a``\n" in text
    doc, messages = _parse(text)
    assert [m for m in messages if m["level"] >= 2] == []
    (table,) = list(doc.findall(docutils.nodes.table))
    assert table.astext().startswith("Checks by image")
    (thead,) = list(table.findall(docutils.nodes.thead))
    assert [e.astext() for e in thead.findall(docutils.nodes.entry)] == [
        "Check",
        "Feature",
        "Library",
        "img|1",
        "img2",
    ]
    (tbody,) = list(table.findall(docutils.nodes.tbody))
    rows = [
        [e.astext() for e in r.findall(docutils.nodes.entry)]
        for r in tbody.findall(docutils.nodes.row)
    ]
    assert rows == [
        ["k.a", "a | b <script>alert(1)</script>", "hipBLAS/cuBLAS", "✅", "❌ fail"],
        ["k_b*", "`tick` *star* _u_", "", "", "⁇ flaky"],
    ]
    fields = {f[0].astext(): f[1].astext() for f in doc.findall(docutils.nodes.field)}
    assert fields["Matrix version"] == "v0.3" and fields["Last verified"] == "2026-01-04"


def test_markdown_escapes_pipes_and_has_the_versioned_header():
    md = document_md(DOC)
    assert md.startswith(
        "# Checks by image\n\n- Matrix version: `v0.3`\n- Last verified: `2026-01-04`\n"
        "- Source of truth:\n  - results database sqlite:///x\n"
    )
    assert "| Check | Feature | Library | img\\|1 | img2 |" in md
    assert "| `k.a` | a \\| b \\<script>alert(1)\\</script> | hipBLAS/cuBLAS | ✅ | ❌ fail |" in md


def test_html_escapes_and_links_cells_to_runs():
    html = document_html(DOC)
    # a label may wrap after its "/" (a <wbr>), never show as a tag
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/<wbr>script&gt;" in html
    assert 'data-runs="run-2"' in html and '<a href="#run-run-2">run-2</a>' in html
    assert 'title="flaky: fail, pass — runs run-3"' in html
    assert "Matrix version: <code>v0.3</code>" in html


def test_every_layout_renders_valid_rst_from_a_real_run(cli):
    assert cli("run", "--image", "host").returncode == 0
    for layout in ("checks", "features", "since", "components", "summary", "tiers"):
        # summary and tiers claim from named jobs only: an ad-hoc run counts when asked for
        asked = ("--include-adhoc",) if layout in ("summary", "tiers") else ()
        proc = cli("matrix", "render", "--format", "rst", "--layout", layout, *asked)
        assert proc.returncode == 0, (layout, proc.stderr)
        doc, messages = _parse(proc.stdout)
        assert [m for m in messages if m["level"] >= 2] == [], (layout, messages)
        tables = list(doc.findall(docutils.nodes.table))
        assert tables, layout
        rows = list(tables[0].findall(docutils.nodes.row))
        assert len(rows) >= 2, layout  # a header and at least one row
