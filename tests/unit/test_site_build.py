"""valorch site build on a real SQLite store with a known history: a timed check that
steps up, a check that starts failing, two published versions; every page is there,
failing cells carry a repro, the plot marks the step, and bad input exits 2."""

import random
import re
from datetime import datetime, timedelta

import pytest

from orchestrator.spec import CheckResult, ImageSpec
from orchestrator.store.db import open_engine, session_factory
from tests.conftest import run_cli
from tests.store_helpers import stored_run

T0 = datetime(2026, 1, 1)


def _add(factory, image, i, results, metrics=None):
    with factory() as s:
        run = stored_run(s, image, results, batch=f"b{i:03d}", digest="sha256:" + f"{i % 2:x}" * 64)
        run.started, run.ended, run.state = (
            T0 + timedelta(hours=i),
            T0 + timedelta(hours=i, minutes=5),
            "done",
        )
        s.commit()
        return run.id


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("site")
    db = tmp / "s.sqlite"
    factory = session_factory(open_engine(str(db)))
    rng = random.Random(3)
    a = ImageSpec(alias="img_a", reference="acme/img:a", backend="cpu")
    b = ImageSpec(alias="img_b", reference="acme/img:b", backend="rocm")
    runs = []
    for i in range(14):
        level = 1e-3 if i < 7 else 1.3e-3  # a 30 % step at the eighth run
        samples = tuple(level * (1 + rng.gauss(0, 0.01)) for _ in range(12))
        flag = "fail" if i == 13 else "pass"
        runs.append(
            _add(
                factory,
                a,
                i,
                [
                    CheckResult(
                        check="kernels.matmul.fp32",
                        status="pass",
                        kind="kernel",
                        feature="matmul (float32)",
                        samples=samples,
                        unit="s",
                        metrics={"cpu_pressure": 0.01, "host_load_before": 0.4, "host_cpus": 2},
                    ),
                    CheckResult(
                        check="smoke.tensor_add",
                        status=flag,
                        feature="Tensor op on device",
                        kind="kernel",
                        message="<b>wrong</b> sum" if flag == "fail" else "",
                    ),
                ],
            )
        )
        if i == 6:
            assert run_cli("matrix", "publish", "--version", "v1", db=db).returncode == 0
    runs.append(_add(factory, b, 20, [CheckResult(check="smoke.tensor_add", status="pass")]))
    assert run_cli("matrix", "publish", "--version", "v2", db=db).returncode == 0
    return tmp, db, runs


@pytest.fixture(scope="module")
def site(store):
    tmp, db, runs = store
    out = tmp / "site"
    proc = run_cli("site", "build", "--out", str(out), db=db)
    assert proc.returncode == 0, proc.stderr
    return out, runs


def test_every_page_is_there(site):
    out, runs = site
    for page in (
        "index.html",
        "changes.html",
        "runs/index.html",
        "checks/index.html",
        "images/index.html",
        "matrix/checks.html",
        "matrix/features.html",
        "matrix/since.html",
        "matrix/summary.html",
        "matrix/tiers.html",
        "matrix/components.html",
        "matrix/job-nightly.html",
        "versions/v1.html",
        "versions/v2.html",
        "diffs/v1..v2.html",
        "images/img_a.html",
        "images/img_b.html",
        "checks/kernels.matmul.fp32.html",
        "checks/smoke.tensor_add.html",
        "plots/kernels.matmul.fp32.svg",
    ):
        assert (out / page).is_file(), page
    assert all((out / "runs" / f"{r}.html").is_file() for r in runs)
    index = (out / "index.html").read_text()
    assert 'href="versions/v2.html"' in index and 'href="diffs/v1..v2.html"' in index
    assert (
        'href="matrix/job-nightly.html"' in index and "kernels.matmul.fp32" in index
    )  # a recent change


def test_the_step_is_detected_plotted_and_listed(site):
    out, runs = site
    svg = (out / "plots/kernels.matmul.fp32.svg").read_text()
    assert "shift (slower)" in svg and "<script" not in svg  # no script from anywhere
    assert not re.search(r'(src|href)="https?://', svg)
    check = (out / "checks/kernels.matmul.fp32.html").read_text()
    assert (
        re.search(r"slower \+(29|30|31)\.\d % \(step\)", check)
        and f'href="../runs/{runs[7]}.html"' in check
    )
    changes = (out / "changes.html").read_text()
    assert "kernels.matmul.fp32" in changes and "step" in changes


def test_failing_cells_link_their_run_and_show_the_repro(site):
    out, runs = site
    matrix = (out / "matrix/checks.html").read_text()
    cells = re.findall(r'<td class="cell[^"]*" data-verdict="fail"[^>]*>(.*?)</td>', matrix, re.S)
    assert cells
    for cell in cells:
        assert f'href="../runs/{runs[13]}.html#r-smoke.tensor_add"' in cell
        assert (
            "valorch run --image acme/img@sha256:"
            + "1" * 64
            + " --suite smoke --check smoke.tensor_add"
        ) in cell
    run = (out / f"runs/{runs[13]}.html").read_text()
    assert "valorch run --image acme/img@sha256:" in run and "&lt;b&gt;wrong&lt;/b&gt;" in run
    assert "acme/img:a" in run and "sha256:" + "1" * 64 in run and "abc" in run  # provenance
    assert "\u2705" not in run and "\u274c" not in matrix  # no emoji in HTML: badges


def test_rebuild_replaces_the_site_and_refuses_foreign_directories(store, site):
    tmp, db, _ = store
    out, _ = site
    (out / "stale.html").write_text("old")
    assert run_cli("site", "build", "--out", str(out), db=db).returncode == 0
    assert not (out / "stale.html").exists() and (out / "index.html").exists()
    assert not [p for p in tmp.iterdir() if p.name.startswith(".site.")]  # no temporary left behind
    foreign = tmp / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    proc = run_cli("site", "build", "--out", str(foreign), db=db)
    assert (
        proc.returncode == 2 and "did not build" in proc.stderr and (foreign / "notes.txt").exists()
    )


def test_bad_input(tmp_path, store):
    _, db, _ = store
    proc = run_cli("site", "build", "--out", str(tmp_path / "s"), db=tmp_path / "empty.sqlite")
    assert proc.returncode == 2 and "no runs" in proc.stderr
    proc = run_cli("site", "build", "--out", "/proc/valorch-nope/site", db=db)
    assert (
        proc.returncode == 2
        and "cannot write the site" in proc.stderr
        and "Traceback" not in proc.stderr
    )


def _wait_for_last(work, item):
    """The first item finishes only after the last one: its worker is the slowest."""
    if item == 0:
        assert work["last_done"].wait(60)
    if item == work["last"]:
        work["last_done"].set()
    return item, work["tag"]


def test_forked_pages_come_back_in_order_whichever_worker_finishes_first():
    # the run and check pages are begun in forked workers while the build goes on; the
    # first item is held until the last is done, and still comes back first
    import gc
    import multiprocessing

    from orchestrator.ext.site import service

    items = list(range(service.MIN_FORKED * 2))
    work = {"tag": "given", "last": items[-1], "last_done": multiprocessing.Event()}
    ahead = service._Ahead(_wait_for_last, items, work, 2)
    assert ahead.pool is not None  # forked
    assert service._FORKED == {}  # the workers have their copy; nothing is left here
    assert list(ahead) == [(i, "given") for i in items]
    assert ahead.pool is None  # stopped once read
    service._stop(ahead)
    assert gc.get_freeze_count() == 0  # what was frozen for the workers is given back


def test_pages_are_the_same_rendered_here_or_in_forked_workers(store, monkeypatch):
    import gc

    from orchestrator.ext.site import service

    _tmp, db, _runs = store
    factory = session_factory(open_engine(str(db)))
    built = datetime(2026, 2, 1, 12, 0)

    def pages(workers):
        with factory() as session:
            return [
                (p.path, p.text)
                for p in service.build_pages(session, built=built, workers=workers).pages
            ]

    here = pages(1)
    monkeypatch.setattr(service, "MIN_FORKED", 1)  # a small store's pages forked too
    forked = pages(3)
    assert [p for p, _ in forked] == [p for p, _ in here]  # the same pages, in the same order
    assert forked == here
    assert gc.get_freeze_count() == 0  # what the build froze is given back at its end
    assert any(p.startswith("runs/") for p, _ in here) and any(
        p.startswith("plots/") for p, _ in here
    )


def test_pages_are_the_same_with_the_samples_summarised_by_a_second_process(store, monkeypatch):
    """A store of SUMMARIES_FROM runs or more has its samples summarised by a second process
    (ext/site/summaries.py) while the build reads the results: the same pages, and the
    process is gone when the read ends (it ends with an error too)."""
    from orchestrator.ext.site import service, summaries

    _tmp, db, _runs = store
    factory = session_factory(open_engine(str(db)))
    built = datetime(2026, 2, 1, 12, 0)
    started = []

    class Watched(summaries.Summaries):
        def __init__(self, source):
            super().__init__(source)
            self.taken = 0
            started.append(self)

        def get(self, result_id):
            made = super().get(result_id)
            self.taken += made is not None
            return made

    def pages():
        with factory() as session:
            return [
                (p.path, p.text) for p in service.build_pages(session, built=built, workers=2).pages
            ]

    monkeypatch.setattr(service, "Summaries", Watched)
    alone = pages()
    assert len(started) == 1 and started[0].taken == 0 and started[0].proc is None
    assert started[0].upto == float("inf")  # a small store: no process was started
    monkeypatch.setattr(service, "SUMMARIES_FROM", 1)
    with_process = pages()
    made = started[1]
    assert made.taken >= 14  # the timed check's results, summarised by the process
    assert made.proc is None and made.known == {}  # ended, waited for, every summary taken
    assert with_process == alone

    def damaged(*_args):
        raise RuntimeError("a damaged value")

    monkeypatch.setattr(service, "load_runs", damaged)
    with pytest.raises(RuntimeError):
        pages()
    assert started[2].proc is None  # stopped on the way out
