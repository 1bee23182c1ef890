"""The static site as a person sees it: built from real runs (Docker images and the host
interpreter), opened from disk in headless Chromium with the network off (its own empty
network namespace) and a net log that must show no http(s) request. The DOM is read back
(every failing cell links to its run page and shows its repro) and screenshots are taken at
1400×1000 (VALORCH_UPDATE_SCREENSHOTS=1 copies them to docs/img/)."""

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_cli

pytestmark = pytest.mark.browser

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1000",
]
# what a failure of the image is (docs/statuses.md): unsupported is not, and has no repro
FAILING = ("fail", "crash", "timeout", "partial")


def page_requests(netlog: Path) -> list[str]:
    """URLs the page asked for: net-log sources whose initiator is an origin (a page); the
    browser's own background fetches are initiated by 'not an origin'."""
    try:
        events = json.loads(netlog.read_text(errors="replace")).get("events", [])
    except (OSError, ValueError):
        text = netlog.read_text(errors="replace").rstrip().rstrip(",")
        events = json.loads(text + "]}").get("events", [])
    url, initiator = {}, {}
    for e in events:
        params, src = e.get("params") or {}, (e.get("source") or {}).get("id")
        if "url" in params:
            url.setdefault(src, params["url"])
        if "initiator" in params:
            initiator[src] = params["initiator"]
    return sorted(
        {u for s, u in url.items() if initiator.get(s, "not an origin") != "not an origin"}
    )


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    exe = shutil.which("chromium")
    if exe is None:
        pytest.fail("headless Chromium is needed (apt-get install chromium)")
    tmp = tmp_path_factory.mktemp("chromium")

    def browse(page: Path, screenshot: Path | None = None) -> tuple[str, list[str]]:
        """The DOM after load, and every URL the browser requested (from its net log)."""
        netlog = tmp / f"{page.stem}.netlog.json"
        base = [
            "unshare",
            "--net",
            exe,
            *FLAGS,
            f"--user-data-dir={tmp / 'profile'}",
            f"--log-net-log={netlog}",
        ]
        if screenshot is not None:
            subprocess.run(
                [*base, f"--screenshot={screenshot}", page.as_uri()],
                capture_output=True,
                timeout=120,
                check=True,
            )
        dom = subprocess.run(
            [*base, "--dump-dom", page.as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
        return dom, page_requests(netlog)

    return browse


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("site-browser")
    db = tmp / "v.sqlite"
    catalog = tmp / "images"
    catalog.mkdir()
    (catalog / "t.yaml").write_text(
        "family: local-test\nbackend: cpu\nlocal: true\nimages:\n"
        "  - alias: cpu_debian12_py3.11_pytorch_2.13\n    reference: valorch/test:pip-torch\n"
        '    components: {pytorch: "2.13", python: "3.11"}\n'
        "  - alias: cpu_debian12_py3.11_pytorch_1.13\n    reference: valorch/test:debian-torch\n"
        '    components: {pytorch: "1.13", python: "3.11"}\n'
        "  - alias: cpu_debian12_no_torch\n    reference: valorch/base:bookworm\n    components: {}\n"
        '  - alias: torch_claims_9\n    reference: valorch/test:pip-torch\n    components: {pytorch: "9.9"}\n'
    )

    def run(*args):
        proc = run_cli(
            "run", *args, "--catalog", str(catalog), "--json", "--no-gate", "--no-matrix", db=db
        )
        assert proc.returncode in (0, 3), proc.stderr

    for alias in ("cpu_debian12_py3.11_pytorch_2.13", "cpu_debian12_py3.11_pytorch_1.13"):
        run("--image", alias)
    assert (
        run_cli("matrix", "publish", "--version", "v0.1", "--include-adhoc", db=db).returncode == 0
    )
    for _ in range(5):  # a timed history on this host
        run("--image", "host", "--suite", "smoke")
    for alias in ("cpu_debian12_no_torch", "torch_claims_9"):
        run("--image", alias)
    assert (
        run_cli("matrix", "publish", "--version", "v0.2", "--include-adhoc", db=db).returncode == 0
    )
    out = tmp / "site"
    proc = run_cli("site", "build", "--out", str(out), "--catalog", str(catalog), db=db)
    assert proc.returncode == 0, proc.stderr
    return out


class Cells(HTMLParser):
    """The matrix cells: verdict, links, repro commands."""

    def __init__(self):
        super().__init__()
        self.cells, self.cur, self.in_code = [], None, False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "td" and "data-verdict" in a:
            self.cur = {"verdict": a["data-verdict"], "links": [], "repro": []}
            self.cells.append(self.cur)
        elif self.cur is not None and tag == "a":
            self.cur["links"].append(a.get("href", ""))
        elif self.cur is not None and tag == "code":
            self.in_code = True
            self.cur["repro"].append("")

    def handle_endtag(self, tag):
        if tag == "td":
            self.cur = None
        if tag == "code":
            self.in_code = False

    def handle_data(self, data):
        if self.cur is not None and self.in_code:
            self.cur["repro"][-1] += data


def test_the_request_check_can_fail(browser, tmp_path):
    page = tmp_path / "control.html"
    page.write_text('<html><body>valorch <img src="http://127.0.0.1:9/x.png"></body></html>')
    _, urls = browser(page)
    assert "http://127.0.0.1:9/x.png" in urls


def test_pages_render_offline_and_screenshots(browser, site, tmp_path):
    shots = {
        "index": site / "index.html",
        "matrix": site / "matrix/checks.html",
        "check": site / "checks/smoke.matmul.fp32.html",
    }
    run_pages = sorted((site / "runs").glob("*-*.html"), key=lambda p: -p.stat().st_size)
    failing = [p for p in run_pages if 'data-verdict="fail"' in p.read_text()]
    shots["run"] = (failing or run_pages)[0]
    for name, page in shots.items():
        shot = tmp_path / f"site-{name}.png"
        dom, urls = browser(page, shot)
        assert "valorch" in dom and shot.stat().st_size > 20_000
        external = [u for u in urls if u.startswith(("http:", "https:", "ws:", "wss:"))]
        assert not external, f"{page.name} requested {external}"
        if os.environ.get("VALORCH_UPDATE_SCREENSHOTS"):
            shutil.copy(shot, ROOT / "docs" / "img" / shot.name)
    check_dom, _ = browser(shots["check"])
    assert 'id="trend"' in check_dom and 'src="../plots/smoke.matmul.fp32.svg"' in check_dom


def test_every_failing_cell_links_its_run_and_shows_its_repro(browser, site):
    dom, _ = browser(site / "matrix/checks.html")
    parser = Cells()
    parser.feed(dom)
    bad = [c for c in parser.cells if c["verdict"] in FAILING]
    assert bad  # the image whose catalog claims 9.9 (the one without torch is unsupported)
    for cell in bad:
        runs = [h for h in cell["links"] if h.startswith("../runs/")]
        assert runs, cell
        assert (site / "matrix" / runs[0].split("#")[0]).is_file()
        assert any(
            r.startswith("valorch run --image ") and " --check " in r for r in cell["repro"]
        ), cell
    assert "<b>9.9</b>" not in dom
    # the filters are there and work on the DOM the browser built
    assert 'id="f-backend"' in dom and 'id="f-status"' in dom and 'class="rowh"' in dom


def test_run_page_shows_provenance_and_repro(browser, site):
    failing = [
        p for p in (site / "runs").glob("*-*.html") if 'data-verdict="fail"' in p.read_text()
    ]
    dom, _ = browser(failing[0])
    for label in (
        "reference",
        "digest",
        "host",
        "GPUs",
        "valorch",
        "spec hash",
        "host load per CPU",
        "CPU governor",
    ):
        assert f"<th>{label}</th>" in dom
    assert re.search(r"valorch run --image \S+ --suite smoke --check env\.version\.pytorch", dom)
