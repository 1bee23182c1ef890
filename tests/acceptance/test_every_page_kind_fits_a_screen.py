"""Every kind of HTML page valorch writes fits a laptop screen (1400 px) and half of one
(800 px) in headless Chromium (tests/acceptance/screen_support.py): the standalone matrix
(`matrix render --format html`) of each layout, the qualify report with a long failure
detail, the diff report, and the site's pages (index, matrix, run, check, image, known
issues, its copy of the qualify report). No page wider than the window, no cell whose text
spills out of it, no header broken inside a name; a matrix may scroll inside its own frame.
The standalone matrix's row names (check ids, image references) break only after a
separator too. Built from real runs on the host interpreter; screenshots of every page at
both widths are left in the test's tmp dir. The text sinks of the tiers layout carry no
HTML entity."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.acceptance.screen_support import measure
from tests.conftest import run_cli

pytestmark = pytest.mark.browser

# a check id and a failure detail shaped like the ones that broke the pages: a dotted id,
# a site-packages path and a mangled C++ symbol, none with a space to wrap at
DETAIL = (
    "ImportError: /usr/local/lib/python3.11/site-packages/torchvision/_C.cpython-311-"
    "x86_64-linux-gnu.so: undefined symbol: "
    + "_ZN2at4_ops19upsample_bilinear2d4callERKNS_6TensorEN3c108ArrayRefINS5_6SymIntEEEb"
    * 3
)
JOB = """name: pages
images: [host]
suites:
  - name: command
    commands:
      - id: compile.inductor.mlp_with_a_long_name
        argv: [python3, --version]
        stdout: ['^Python 3']
      - id: torchvision.ops.roi_align.imports_its_extension
        argv: [python3, -c, "{code}"]
        stdout: ['^ok']
"""
PASSING = "print('ok')"
FAILING = f"import sys; print('{DETAIL}'); sys.exit(1)"
ISSUES = """issues:
  - check: command.compile.inductor.mlp_with_a_long_name
    images: host
    reason: a known issue whose reason is long enough to wrap in its cell on a narrow screen
"""
LAYOUTS = ("checks", "components", "libraries", "tiers", "features", "summary")
ROW_SPLITS = r"""(function () {
  var out = [];
  document.querySelectorAll('th[scope=row]').forEach(function (th) {
    var walk = document.createTreeWalker(th, NodeFilter.SHOW_TEXT), node, prev = null;
    while ((node = walk.nextNode())) {
      for (var k = 0; k < node.data.length; k++) {
        var r = document.createRange(); r.setStart(node, k); r.setEnd(node, k + 1);
        var rects = r.getClientRects(), c = node.data[k];
        if (!rects.length || /\s/.test(c)) { prev = null; continue; }
        if (prev && rects[0].top > prev.top + 2 && !/[\s_\/:@\-.,(]/.test(prev.c)) {
          out.push(th.textContent.trim() + ' breaks before ' + node.data.slice(k));
        }
        prev = {top: rects[0].top, c: c};
      }
    }
  });
  return out;
})()"""
# a row's name (a reference such as pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime) squeezed
# into a column of a few characters: more than four lines (a 90-character reference
# with its digest takes four at the least width a row name gets)
SQUEEZED = """Array.prototype.filter.call(document.querySelectorAll('th[scope=row]'), function (th) {
    var r = document.createRange(), tops = {};
    r.selectNodeContents(th);
    Array.prototype.forEach.call(r.getClientRects(), function (x) { tops[Math.round(x.top)] = 1; });
    return Object.keys(tops).length > 4;
  }).map(function (th) { return th.textContent.trim(); })"""


def cli(*args: str, db: Path, ok: tuple[int, ...] = (0,)):
    proc = run_cli(*args, db=db)
    assert proc.returncode in ok, (args, proc.stdout[-2000:], proc.stderr[-2000:])
    return proc


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("every-page")
    db = tmp / "v.sqlite"
    (tmp / "pages.yaml").write_text(JOB.format(code=PASSING))
    (tmp / "pages-rc.yaml").write_text(JOB.format(code=FAILING))
    (tmp / "issues.yaml").write_text(ISSUES)
    cli("run", "--job", str(tmp / "pages.yaml"), "--executor", "host", "--no-gate", db=db)
    cli("matrix", "publish", "--version", "pages-v1", "--job", "pages", db=db)
    reports = tmp / "reports"
    qualify = [
        *("qualify", "--job", str(tmp / "pages-rc.yaml"), "--baseline", "pages-v1"),
        *("--executor", "host", "--out-dir", str(reports / "rc1")),
    ]
    cli(*qualify, db=db, ok=(1,))
    cli("matrix", "publish", "--version", "pages-v2", "--job", "pages", db=db)
    out: dict[str, Path] = {"qualify report": reports / "rc1" / "report.html"}
    diff = tmp / "diff.html"
    cli("diff", "pages-v1", "pages-v2", "--format", "html", "--out", str(diff), db=db, ok=(0, 1))
    out["diff report"] = diff
    for layout in LAYOUTS:
        page = tmp / f"matrix-{layout}.html"
        cli("matrix", "render", "--layout", layout, "--format", "html", "--out", str(page), db=db)
        out[f"matrix {layout}"] = page
    site = tmp / "site"
    build = ("site", "build", "--out", str(site), "--qualify-dir", str(reports))
    cli(*build, "--known-issues", str(tmp / "issues.yaml"), db=db)
    failing = [
        p for p in (site / "runs").glob("*-*.html") if 'data-verdict="fail"' in p.read_text()
    ]
    out |= {
        "site index": site / "index.html",
        "site changes": site / "changes.html",
        "site matrix": site / "matrix/checks.html",
        "site run": failing[0],
        "site check": site / "checks/command.torchvision.ops.roi_align.imports_its_extension.html",
        "site image": site / "images/host.html",
        "site known issues": site / "known-issues.html",
        "site qualify copy": next((site / "qualify").glob("*.html")),
    }
    out["db"] = db
    return out


def test_every_page_kind_fits_800_and_1400_px(pages, screen, tmp_path):
    # these show every column without scrolling; a matrix may scroll in its own frame
    must_fit = {"qualify report", "diff report", "site qualify copy", "site run", "site index"}
    must_fit |= {"site check", "site image", "site known issues", "site changes"}
    problems = []
    for kind, page in pages.items():
        if kind == "db":
            continue
        assert page.is_file(), (kind, page)
        for width in (1400, 800):
            shot = tmp_path / f"{kind.replace(' ', '-')}-{width}.png"
            found = measure(screen, page, width, shot)
            keys = ("overflowing", "overlaps", "splits") + (
                ("scrolled",) if kind in must_fit else ()
            )
            problems += [f"{kind} at {width} px: {k}: {found[k][:3]}" for k in keys if found[k]]
            if kind.startswith("matrix "):  # the standalone page: row names too
                split = screen.evaluate(ROW_SPLITS)
                squeezed = screen.evaluate(SQUEEZED)
                problems += [f"{kind} at {width} px: squeezed: {squeezed[:3]}"] if squeezed else []
                problems += [f"{kind} at {width} px: row name split: {split[:3]}"] if split else []
    assert not problems, "\n".join(problems)


def test_the_long_detail_is_in_the_report_whole(pages):
    html = pages["qualify report"].read_text()
    assert "_ZN2at4_ops19upsample_bilinear2d4call" in html and 'class="detail"' in html
    # the stylesheet is the one every page shares: the site's copy and the matrix carry it
    css = re.search(r"<style>(.*?)</style>", html, re.DOTALL).group(1)
    shared = css.split("/* the report's own", 1)[0].strip()
    assert len(shared) > 1000
    for kind in ("matrix checks", "site index", "site qualify copy"):
        assert shared in pages[kind].read_text(), kind


@pytest.mark.parametrize("fmt", [(), ("--format", "md")], ids=["terminal", "md"])
def test_tiers_notes_carry_no_html_entity(pages, fmt):
    proc = cli("matrix", "render", "--layout", "tiers", *fmt, db=pages["db"])
    out = proc.stdout
    assert "experimental > 0% pass" in out and "first-class ≥ " in out, out[-1500:]
    assert not re.search(r"&(gt|lt|amp|quot|#\d+);", out), re.findall(r"&\w+;", out)


def test_the_changes_page_names_the_detector_the_code_runs(pages):
    changes = pages["site changes"].read_text()
    assert "binary segmentation of the log medians" in changes and "PELT" not in changes
