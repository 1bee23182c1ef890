"""The qualify report, the run page and the site's pages fit a laptop screen (1400 px) and
half of one (800 px), as a person sees them in headless Chromium: no cell past the page's
edge, no cell whose text spills out of it, no pane over another, no header broken inside a
name. Built from real runs on the host interpreter: a job whose failing check prints a
300-character C++ symbol, qualified against a published version of the same job (into an
--out-dir named like nothing in particular), a second job published on its own, and two
timed smoke runs. Screenshots of every page at both widths are left in the test's tmp dir."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.acceptance.screen_support import measure
from tests.conftest import run_cli

pytestmark = pytest.mark.browser

SYMBOL = "_ZN2at4_ops5clone4callERKNS_6TensorESt8optionalIN3c1012MemoryFormatEE"
JOB = """name: wide
images: [host]
suites:
  - name: command
    commands:
      - id: a-python
        argv: [python3, --version]
        stdout: ['^Python 3']
      - id: zz-loads-the-extension
        argv: [python3, -c, "{code}"]
        stdout: ['^ok']
"""
PASSING = "print('ok')"
FAILING = f"import sys; print('undefined symbol: ' + '{SYMBOL}' * 4); sys.exit(1)"
OTHER = """name: other
images: [host]
suites:
  - name: command
    commands:
      - id: b-echo
        argv: [python3, -c, "print('b')"]
"""


def cli(*args: str, db: Path, ok: tuple[int, ...] = (0,)) -> str:
    proc = run_cli(*args, db=db)
    assert proc.returncode in ok, (args, proc.stdout[-2000:], proc.stderr[-2000:])
    return proc.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("screens")
    db = tmp / "v.sqlite"
    (tmp / "wide.yaml").write_text(JOB.format(code=PASSING))
    (tmp / "wide-rc.yaml").write_text(JOB.format(code=FAILING))
    (tmp / "other.yaml").write_text(OTHER)
    cli("run", "--job", str(tmp / "wide.yaml"), "--executor", "host", "--no-gate", db=db)
    cli("matrix", "publish", "--version", "wide-v1", "--job", "wide", db=db)
    cli("run", "--job", str(tmp / "other.yaml"), "--executor", "host", "--no-gate", db=db)
    cli("matrix", "publish", "--version", "other-v1", "--job", "other", db=db)
    for _ in range(2):  # a timed history too short to call a step
        cli("run", "--image", "host", "--suite", "smoke", "--no-gate", "--no-matrix", db=db)
    reports = tmp / "reports"
    out_dir = reports / "rc1 against wide-v1"  # what a user passes to --out-dir
    cli(
        "qualify",
        "--job",
        str(tmp / "wide-rc.yaml"),
        "--baseline",
        "wide-v1",
        "--executor",
        "host",
        "--out-dir",
        str(out_dir),
        db=db,
        ok=(1,),
    )
    cli("matrix", "publish", "--version", "wide-v2", "--job", "wide", db=db)
    site = tmp / "site"
    warned = cli("site", "build", "--out", str(site), "--qualify-dir", str(reports), db=db)
    return {"tmp": tmp, "db": db, "site": site, "report": out_dir / "report.html", "log": warned}


def failing_run(site: Path) -> Path:
    pages = [p for p in (site / "runs").glob("*-*.html") if 'data-verdict="fail"' in p.read_text()]
    assert pages
    return pages[0]


def test_every_page_kind_fits_800_and_1400_px(built, screen, tmp_path):
    site = built["site"]
    must_fit = {  # these pages show every column without scrolling
        "qualify report": built["report"],
        "run": failing_run(site),
        "index": site / "index.html",
        "changes": site / "changes.html",
        "check with trend": site / "checks/smoke.matmul.fp32.html",
        "check list": site / "checks/index.html",
        "run list": site / "runs/index.html",
        "image": site / "images/host.html",
    }
    may_scroll = {  # a matrix may scroll inside its own frame, never the page
        "matrix": site / "matrix/checks.html",
        "job matrix": site / "matrix/job-wide.html",
        "version": site / "versions/wide-v2.html",
        "version diff": sorted((site / "diffs").glob("*.html"))[-1],
    }
    problems = []
    for kind, page in {**must_fit, **may_scroll}.items():
        for width in (1400, 800):
            shot = tmp_path / f"{kind.replace(' ', '-')}-{width}.png"
            found = measure(screen, page, width, shot)
            keys = ("overflowing", "overlaps", "splits") + (
                ("scrolled",) if kind in must_fit else ()
            )
            problems += [f"{kind} at {width} px: {k}: {found[k][:3]}" for k in keys if found[k]]
            assert shot.stat().st_size > 10_000
    assert not problems, "\n".join(problems)


def test_run_page_lists_failures_first_and_filters_them(built, screen):
    page = failing_run(built["site"])
    html = page.read_text()
    verdicts = re.findall(r'<tr id="r-[^"]+" data-verdict="([^"]+)"', html)
    # zz-loads-the-extension fails and sorts last by name: it comes first
    assert verdicts[0] == "fail" and "pass" in verdicts, verdicts
    assert html.index("r-command.zz-loads-the-extension") < html.index("r-command.a-python")
    # without a script the filter is hidden (the page is the sorted list); the script shows it
    assert re.search(r'<form [^>]*id="result-filter" hidden', html)
    screen.load(page, 1400)
    dom = screen.dom()
    form = re.search(r'<form [^>]*id="result-filter"[^>]*>', dom)
    assert form and "hidden" not in form.group(0), form
    assert '<span class="muted small" id="shown">2 of 2 results</span>' in dom


def test_site_diffs_a_version_only_with_one_of_the_same_job(built):
    site = built["site"]
    diffs = sorted(p.name for p in (site / "diffs").glob("*.html"))
    # other-v1 (job other, published between them) is neither diffed nor diffed against
    assert diffs == ["wide-v1..wide-v2.html"], diffs
    index = (site / "index.html").read_text()
    assert "wide-v1 → wide-v2" in index and "other-v1 → wide-v2" not in index
    assert "wide-v1 → other-v1" not in index


def test_site_finds_qualify_reports_in_any_out_dir_and_warns_when_none(built, tmp_path):
    site = built["site"]
    pages = sorted(p.name for p in (site / "qualify").glob("*.html"))
    assert len(pages) == 1 and pages[0].startswith("rc1_against_wide-v1"), pages
    assert "NOT QUALIFIED" in (site / "qualify" / pages[0]).read_text()
    assert "qualify/" in (site / "index.html").read_text()
    empty = tmp_path / "no-reports"
    empty.mkdir()
    proc = run_cli(
        "site", "build", "--out", str(tmp_path / "s2"), "--qualify-dir", str(empty), db=built["db"]
    )
    assert proc.returncode == 0, proc.stderr
    assert f"--qualify-dir {empty} holds no qualification report" in proc.stderr


def test_changes_list_status_flips_and_say_when_nothing_was_detected(built, tmp_path):
    site = built["site"]
    changes = (site / "changes.html").read_text()
    flips = changes.split('id="flips"', 1)[1].split("</table>", 1)[0]
    assert "command.zz-loads-the-extension" in flips and "pass → fail" in flips
    recent = (site / "index.html").read_text().split('id="recent-changes"', 1)[1]
    assert "pass → fail" in recent.split("</table>", 1)[0]
    assert 'id="nothing"' not in changes
    # one run: nothing can have changed, and the page says so
    db = tmp_path / "one.sqlite"
    cli("run", "--job", str(built["tmp"] / "other.yaml"), "--executor", "host", "--no-gate", db=db)
    cli("site", "build", "--out", str(tmp_path / "s"), "--qualify-dir", str(tmp_path), db=db)
    alone = (tmp_path / "s" / "changes.html").read_text()
    assert '<p id="nothing"><strong>Nothing detected</strong>' in alone
    assert "<table" not in alone.split("<main>", 1)[1]  # no empty table


def test_trend_text_says_what_the_detector_decided(built):
    page = (built["site"] / "checks/smoke.matmul.fp32.html").read_text()
    decided = page.split('id="decisions"', 1)[1].split("</table>", 1)[0]
    assert "host @ " in decided
    assert "too few runs to call a step: 2 runs here, the detector needs at least 4" in decided


def test_html_fragment_styles_only_itself(built):
    proc = run_cli("matrix", "render", "--format", "html", "--fragment", db=built["db"])
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.strip()
    assert out.startswith('<div class="valorch-matrix">') and out.endswith("</div>"), out[:200]
    css = out.split("<style>", 1)[1].split("</style>", 1)[0]
    selectors = [s.strip() for rule in re.findall(r"([^{}]+)\{", css) for s in rule.split(",")]
    assert selectors and all(s.startswith(".valorch-matrix ") for s in selectors), selectors
