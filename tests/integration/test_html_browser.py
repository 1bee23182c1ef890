"""The HTML matrix and diff report as a person sees them: loaded in headless
Chromium (Debian's package), the rendered DOM read back and a screenshot taken.
Hostile text from a check (a message with markup) must arrive as text."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.browser

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def chromium(tmp_path_factory):
    exe = shutil.which("chromium")
    if exe is None:
        proc = subprocess.run(
            ["apt-get", "install", "-y", "-qq", "chromium"],
            capture_output=True,
            text=True,
            env={"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
        )
        exe = shutil.which("chromium")
        if exe is None:
            pytest.fail(
                f"headless Chromium is needed (apt-get install chromium): {proc.stderr[-1000:]}"
            )
    profile = tmp_path_factory.mktemp("chromium-profile")

    def browse(page: Path, screenshot: Path | None = None) -> str:
        base = [exe, *FLAGS, f"--user-data-dir={profile}"]
        if screenshot is not None:
            subprocess.run(
                [*base, f"--screenshot={screenshot}", "--window-size=1400,900", page.as_uri()],
                capture_output=True,
                timeout=120,
                check=True,
            )
        return subprocess.run(
            [*base, "--dump-dom", page.as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout

    return browse


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("html")
    db = tmp / "v.sqlite"
    catalog = tmp / "images"
    catalog.mkdir()
    # A catalog entry whose expectation carries markup: it comes back in a failure message.
    (catalog / "t.yaml").write_text(
        "family: local-test\nbackend: cpu\nlocal: true\nimages:\n"
        '  - alias: torch_2_13\n    reference: valorch/test:pip-torch\n    components: {pytorch: "2.13.0"}\n'
        "  - alias: torch_claims\n    reference: valorch/test:pip-torch\n"
        '    components: {pytorch: "<b>9.9</b>"}\n'
    )
    runs = []
    for alias in ("torch_2_13", "torch_claims"):
        proc = run_cli(
            "run", "--image", alias, "--catalog", str(catalog), "--json", "--no-gate", db=db
        )
        assert proc.returncode == 0, proc.stderr
        runs.append(json.loads(proc.stdout)[0]["run"])
    return db, catalog, runs, tmp


def test_matrix_html_renders_cells_and_escapes(chromium, two_runs):
    db, _catalog, runs, tmp = two_runs
    page = tmp / "matrix.html"
    proc = run_cli("matrix", "render", "--format", "html", "--out", str(page), db=db)
    assert proc.returncode == 0, proc.stderr
    shot = tmp / "matrix.png"
    dom = chromium(page, shot)
    text = re.sub(r"<[^>]+>", "", dom)  # names carry <wbr> where they may wrap
    assert "smoke.matmul.fp32" in text and "torch_2_13" in text and "torch_claims" in text
    assert "<b>9.9</b>" not in dom  # markup from a check message is never markup
    for r in runs:  # cells link the runs behind them, and the links land
        assert f'href="#run-{r}"' in dom and f'id="run-{r}"' in dom
    assert shot.stat().st_size > 10_000


def test_diff_html_report_renders(chromium, two_runs):
    db, _, (base, head), tmp = two_runs
    page = tmp / "diff.html"
    proc = run_cli("diff", base, head, "--format", "html", "--out", str(page), db=db)
    assert proc.returncode == 1, proc.stderr  # env.version.pytorch: pass → fail
    dom = chromium(page)
    assert "env.version.pytorch" in dom
    assert "regress" in dom.lower()
    assert "<b>9.9</b>" not in dom
