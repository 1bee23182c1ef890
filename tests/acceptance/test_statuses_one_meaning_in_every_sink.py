"""One meaning per status, in every sink, through the real CLI on the host interpreter (a CPU
image): one job whose checks end pass, fail, unsupported (a command whose program is not
installed) and n/a (TunableOp, a GPU row on a CPU image), rendered by run --junit, matrix
render (Markdown, HTML, the summary and tiers layouts), diff and site build.

docs/statuses.md is the table; tests/unit/test_status_table.py checks each sink against it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
import yaml

JOB = {
    "name": "status-sinks",
    "images": ["host"],
    "suites": [
        {"name": "selftest", "checks": ["selftest.pass", "selftest.fail"]},
        {"name": "features", "checks": ["features.cuda.tunableop"]},
        {"name": "smoke", "checks": ["env.version.numpy"]},
        {
            "name": "command",
            "commands": [
                {"id": "ok", "argv": ["python3", "-c", "pass"]},
                {"id": "missing-tool", "argv": ["valorch-no-such-tool-here"]},
            ],
        },
        {
            "name": "pytest",
            "pytest": {"path": "test_brackets.py"},
        },
    ],
}
WORKLOAD = """import pytest


@pytest.mark.parametrize("n", [1])
def test_round_trip(n):
    assert repr("cuda") == "'cuda'"
"""
ISSUES = """issues:
  - check: selftest.fail
    status: fail
    reason: planted failure tracked upstream
    expires: 2999-01-01
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from tests.conftest import run_cli

    tmp = tmp_path_factory.mktemp("statuses")
    db = tmp / "v.sqlite"
    (tmp / "test_brackets.py").write_text(WORKLOAD)
    job = tmp / "status-sinks.yaml"
    job.write_text(yaml.safe_dump(JOB))
    (tmp / "known-issues.yaml").write_text(ISSUES)
    (tmp / "policy.yaml").write_text("min_runs: 1\nmin_span_days: 0\n")
    proc = run_cli(
        "run", "--job", str(job), "--executor", "host", "--junit", str(tmp / "run.xml"), db=db
    )

    def cli(*args: str):
        return run_cli(*args, db=db)

    return tmp, proc, cli


def _junit(path: Path) -> dict[str, tuple[str, str]]:
    out = {}
    for case in ET.fromstring(path.read_text()).iter("testcase"):
        child = next((c for c in case if c.tag in ("failure", "skipped", "error")), None)
        out[case.get("name")] = (
            (child.tag, child.get("message") or "") if child is not None else ("passed", "")
        )
    return out


def _md_cell(md: str, check: str) -> str:
    (line,) = [x for x in md.splitlines() if x.startswith(f"| `{check}`")]
    return line.split(" | ")[-1].removesuffix("|").strip()


def test_run_junit_skips_unsupported_and_not_applicable_with_their_reason(world):
    tmp, proc, _cli = world
    assert proc.returncode == 1, proc.stderr  # selftest.fail fails the run
    cases = _junit(tmp / "run.xml")
    assert cases["selftest.fail"][0] == "failure" and cases["selftest.pass"][0] == "passed"
    assert cases["command.missing-tool"][0] == "skipped"
    assert cases["command.missing-tool"][1].startswith("unsupported: ")
    assert cases["features.cuda.tunableop"][0] == "skipped"
    assert cases["features.cuda.tunableop"][1].startswith("n/a: not applicable: a GPU row")


def test_gpu_rows_on_a_cpu_image_are_blank_not_failed_in_every_layout(world):
    _tmp, _proc, cli = world
    md = cli("matrix", "render", "--format", "md", "--job", "status-sinks").stdout
    assert _md_cell(md, "features.cuda.tunableop") == ""
    assert _md_cell(md, "command.missing-tool") == "⊘ unsupported"
    assert _md_cell(md, "selftest.fail") == "❌ fail"
    doc = json.loads(
        cli("matrix", "render", "--format", "json", "--layout", "seed-features").stdout
    )
    tunable = [r for r in doc["rows"] if "TunableOp" in json.dumps(r["labels"])]
    assert tunable and all(
        c["text"] == "" and c["verdict"] == "n/a"
        for r in tunable
        for c in r["cells"].values()
        if c["verdict"] not in ("", "missing")
    )


def test_the_legend_gives_each_symbol_one_meaning(world):
    _tmp, _proc, cli = world
    md = cli("matrix", "render", "--format", "md", "--job", "status-sinks").stdout
    (legend,) = [x for x in md.splitlines() if x.startswith("✅ pass")]
    assert legend.count("⚠️") == 1 and "⚠️ partial support" in legend
    html = cli("matrix", "render", "--format", "html", "--job", "status-sinks").stdout
    assert "🔲" not in html and "warning</span>" not in html
    assert 'data-status="partial">partial</span> partial support' in html


def test_markdown_keeps_brackets_and_quotes_readable(world):
    _tmp, proc, cli = world
    printed = proc.stdout  # the run's matrix, as the terminal shows it
    assert "test_round_trip[1]" in printed and "&#91;" not in printed
    md = cli("matrix", "render", "--format", "md", "--job", "status-sinks").stdout
    assert "&#" not in md and "test_round_trip[1]`" in md


def test_known_issues_excuse_the_same_failure_in_matrix_render_and_on_the_site(world):
    tmp, _proc, cli = world
    issues = str(tmp / "known-issues.yaml")
    md = cli(
        "matrix", "render", "--format", "md", "--job", "status-sinks", "--known-issues", issues
    ).stdout
    assert _md_cell(md, "selftest.fail") == "⚑ xfail"
    proc = cli("site", "build", "--out", str(tmp / "site"), "--known-issues", issues)
    assert proc.returncode == 0, proc.stderr
    page = (tmp / "site" / "matrix" / "checks.html").read_text()
    row = page[page.index("selftest.fail") :]
    row = row[: row.index("</tr>")]
    assert 'data-status="xfail">waived</span>' in row and 'data-status="fail"' not in row


def test_tiers_count_neither_unsupported_nor_not_applicable_and_need_a_sample(world):
    tmp, _proc, cli = world
    doc = json.loads(
        cli(
            "matrix",
            "render",
            "--format",
            "json",
            "--layout",
            "tiers",
            "--tier-policy",
            str(tmp / "policy.yaml"),
        ).stdout
    )
    (cpu,) = doc["rows"]
    notes = cpu["cells"]["Notes"]["text"]
    # pass, ok, numpy's version (not pinned: reported, passing), the pytest workload and its
    # test pass; fail does not; unsupported and n/a are not counted
    assert re.search(r"pass rate 83\.3% \(5 of 6 checks with a verdict\)", notes), notes
    small = json.loads(cli("matrix", "render", "--format", "json", "--layout", "tiers").stdout)
    tier = small["rows"][0]["cells"]["Tier"]
    assert tier["text"] == "too few runs"
    assert (
        "1 run over 0.0 days; a tier needs 3 over 1 day(s)"
        in small["rows"][0]["cells"]["Notes"]["text"]
    )


def test_freshness_counts_the_cells_the_summary_shows(world):
    _tmp, _proc, cli = world
    md = cli("matrix", "render", "--format", "md", "--layout", "summary").stdout
    found = re.search(r"freshness: (\d+) of (\d+) dated cells?", md)
    assert found and int(found.group(2)) > 0 and "0 of 0" not in md, md
    # a description is never cut inside its parenthesis
    assert "(prefix match; a pre-release or git build matching only by prefix is flagged)" in md


def test_a_check_that_never_ran_in_the_base_is_no_lost_coverage(world):
    tmp, _proc, cli = world
    runs = json.loads(cli("results", "list", "--json").stdout)
    base = runs[0]["run"]
    narrow = tmp / "narrow.yaml"
    job = dict(JOB, suites=[JOB["suites"][0]])
    narrow.write_text(yaml.safe_dump(job))
    cli("run", "--job", str(narrow), "--executor", "host", "--no-matrix", "--no-gate")
    head = json.loads(cli("results", "list", "--json").stdout)[0]["run"]
    out = cli("diff", base, head, "--format", "json").stdout
    lost = [c["check"] for c in json.loads(out)["changes"] if c["kind"] == "coverage_lost"]
    assert "command.missing-tool" not in lost and "features.cuda.tunableop" not in lost
    assert "command.ok" in lost  # a check that passed is still lost coverage
