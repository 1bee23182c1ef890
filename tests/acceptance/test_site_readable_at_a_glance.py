"""The site is readable at a glance, as a person sees it in headless
Chromium: matrix column headers are pairwise distinct (the 1.13 and 2.13 images no longer
both read "cpu_debian12_py3.1…"), the seed-shaped page has its sections, the tiers page
shows its badge once per row, the check page names the libraries its results evidence,
and every page is shot at 1400×1000 and 800×1000 and measured there: nothing past the page's
edge or out of its cell, no pane over another, no header broken inside a name
(VALORCH_UPDATE_SCREENSHOTS=1 copies the README's shots to docs/img/)."""

from __future__ import annotations

import os
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.acceptance.screen_support import Browser, measure
from tests.conftest import ROOT, run_cli

pytestmark = [pytest.mark.docker, pytest.mark.browser]
IMAGES = ("cpu_debian12_py3.11_pytorch_1.13", "cpu_debian12_py3.11_pytorch_2.13")
BROKEN = "cpu_debian12_py3.11_pytorch_1.13_broken_torchvision"  # a family member with a long tail
README_SHOTS = {
    "site-matrix.png": "matrix/checks.html",
    "site-seed-features.png": "matrix/seed-features.html",
    "site-index.png": "index.html",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    if shutil.which("chromium") is None:
        pytest.fail("headless Chromium is needed (apt-get install chromium)")
    tmp = tmp_path_factory.mktemp("site-glance")
    db = tmp / "v.sqlite"
    job = tmp / "nightly.yaml"  # a named job: tiers and the summary claim from named jobs only
    job.write_text(
        f"name: nightly\nimages: [{IMAGES[0]}, {BROKEN}, {IMAGES[1]}]\nsuites:\n  - name: smoke\n"
        "  - name: features\n"
    )
    proc = run_cli("run", "--job", str(job), "--no-gate", "--no-matrix", db=db)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for _ in range(2):  # a timed history: the check page's trend plot
        assert (
            run_cli(
                "run", "--image", "host", "--suite", "smoke", "--no-gate", "--no-matrix", db=db
            ).returncode
            == 0
        )
    out = tmp / "site"
    proc = run_cli("site", "build", "--out", str(out), db=db)
    assert proc.returncode == 0, proc.stderr
    return out


def dom_at(screen: Browser, page: Path, width: int) -> str:
    screen.load(page, width)
    return screen.dom()


class Header(HTMLParser):
    """The matrix header as the browser built it: the family row (text, colspan) and the leaves."""

    def __init__(self):
        super().__init__()
        self.families, self.leaves, self.cur, self.in_head = [], [], None, False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "thead":
            self.in_head = True
        elif self.in_head and tag == "th" and "fam" in (a.get("class") or "").split():
            self.cur = {"text": "", "span": int(a.get("colspan", "1"))}
            self.families.append(self.cur)
        elif self.in_head and tag == "th" and "col" in (a.get("class") or "").split():
            self.cur = {"text": "", "name": a.get("data-name", "")}
            self.leaves.append(self.cur)
        elif tag == "span" and self.cur is not None and "be" in (a.get("class") or "").split():
            self.cur = None  # the backend line under a leaf does not tell columns apart

    def handle_endtag(self, tag):
        if tag == "thead":
            self.in_head = False
        if tag == "th":
            self.cur = None

    def handle_data(self, data):
        if self.cur is not None:
            self.cur["text"] += data


def shown_headers(dom: str) -> list[tuple[str, str]]:
    """(what the column reads as, its full name) per column: its family's text over its leaf's."""
    h = Header()
    h.feed(dom)
    over = [f["text"].strip() for f in h.families for _ in range(f["span"])] or [""] * len(h.leaves)
    assert len(over) == len(h.leaves)
    return [
        (f"{fam} {leaf['text'].strip()}".strip(), leaf["name"])
        for fam, leaf in zip(over, h.leaves, strict=False)
    ]


@pytest.mark.parametrize(
    "page",
    [
        "matrix/checks.html",
        "matrix/features.html",
        "matrix/since.html",
        "matrix/seed-features.html",
        "matrix/job-nightly.html",
    ],
)
def test_matrix_headers_are_pairwise_distinct(site, screen, page):
    dom = dom_at(screen, site / page, 800)
    heads = shown_headers(dom)
    assert len(heads) >= 1
    assert len({text for text, _ in heads}) == len(heads), heads
    if page.endswith(("checks.html", "job-nightly.html")):
        by_name = {name: text for text, name in heads}
        # the two torch images: one family over two versions, each column read whole
        assert by_name[IMAGES[0]] == "cpu_debian12_py3.11_pytorch 1.13"
        assert by_name[IMAGES[1]] == "cpu_debian12_py3.11_pytorch 2.13"
        assert "…" not in dom.split("</thead>")[0]


def test_seed_tiers_and_check_pages_read_well(site, screen):
    seed = dom_at(screen, site / "matrix/seed-features.html", 1400)
    for section in (
        "Tensor data types",
        "torch.cuda",
        "torch.backends.cuda",
        "Distributed library features",
    ):
        assert f'scope="rowgroup">{section}</th>' in seed
    tiers = dom_at(screen, site / "matrix/tiers.html", 1400)
    rows = tiers.split("<tbody>", 1)[1].split("</tbody>", 1)[0].split("<tr ")[1:]
    assert rows and all(r.count('class="badge') == 1 for r in rows), rows  # the tier, once per row
    check = dom_at(screen, site / "checks/smoke.matmul.fp32.html", 1400)
    libs = check.split('id="libraries">', 1)[1].split("</td>", 1)[0]
    assert "hipBLAS/cuBLAS" not in libs  # the row's label is not evidence
    assert libs.strip()


def test_every_page_shot_at_two_widths(site, screen, tmp_path):
    # every kind of page: the index and lists, every matrix layout, a check with its plot, a run, images
    pages = sorted(
        p
        for p in site.rglob("*.html")
        if p.parent.name in ("matrix", site.name)
        or p.name in ("index.html", "smoke.matmul.fp32.html")
    )
    pages += (
        sorted((site / "runs").glob("*-*.html"))[:1] + sorted((site / "images").glob("*.html"))[:2]
    )
    for kind in ("checks", "runs", "images"):
        assert site / kind / "index.html" in pages
    assert len(pages) >= 16
    problems = []
    for page in pages:
        for width in (1400, 800):
            shot = tmp_path / f"{page.parent.name}-{page.stem}-{width}.png"
            found = measure(screen, page, width, shot)  # the DOM as laid out at that width
            assert shot.stat().st_size > 10_000, page
            # no cell past the page or spilling out of its cell, no pane over another, no
            # header broken inside a name ("py / 3.11"); only a matrix scrolls, in its frame
            keys = ["overflowing", "overlaps", "splits"]
            if page.parent.name != "matrix":
                keys.append("scrolled")
            problems += [
                f"{page.relative_to(site)} at {width}: {k}: {found[k][:3]}"
                for k in keys
                if found[k]
            ]
    assert not problems, "\n".join(problems)
    if os.environ.get("VALORCH_UPDATE_SCREENSHOTS"):
        for name, page in README_SHOTS.items():
            screen.load(site / page, 1400)
            screen.shot(ROOT / "docs" / "img" / name)
