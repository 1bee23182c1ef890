"""The matrix cell, proven against an independent oracle.

The oracle below is written from docs/statuses.md and docs/matrix.md alone, importing none of
the production decision code (only the rendering constants are not even needed: the symbols
are copied from the docs' table):

- a cell is the **newest final verdict** of its check in its environment: runs read newest
  first, a whole run settles its suite, a check with no final verdict there looks back at most
  16 more runs (``LOOKBACK``); every verdict but ``error`` is final where the suite ran whole;
  a final verdict under a newer inconclusive one says *(newer run inconclusive)*;
- the verdict of one run's attempts: fail (or crash, timeout) and pass mixed is ``flaky``,
  otherwise the last attempt's status;
- in a ROCm or CUDA image a result that ran on the CPU is ``◐ cpu only``, never ✅; the
  environment of a GPU image run ``--cpu-only`` is its own column, ``ALIAS · cpu only``;
- rows follow the job's suite order, whatever order the suites ran in.

Hypothesis generates an environment (backend, --cpu-only or not), the job's suite order and
a history of runs (each check's attempts: statuses and devices, stored in any order). The
production path is driven as each sink drives it: ``valorch run``'s report
(``services/views.observations`` over the batch's runs → ``matrix.model.build`` → the printed
Markdown and the run's JSON) and ``matrix render`` (``matrix/evidence.EnvWalk`` →
``services/evidence.assemble`` → ``layouts.observed_table`` → ``stamp`` → the JSON and
Markdown documents). Every sink, parsed back, must show the oracle's cell.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

# --- the oracle (docs/statuses.md, docs/matrix.md) -----------------------------------------

STATUSES = ("pass", "partial", "fail", "crash", "timeout", "error", "unsupported", "skip")
STATUSES += ("n/a", "xfail")
FAILS = ("fail", "crash", "timeout")
GPU = ("rocm", "cuda")
LOOKBACK = 16  # docs/matrix.md: "looks back at most 16 more runs"
TEXT = {  # docs/statuses.md: "terminal, Markdown, RST" column, and the matrix-only verdicts
    "pass": "✅",
    "partial": "⚠️ partial",
    "fail": "❌ fail",
    "crash": "❌ crash",
    "timeout": "❌ timeout",
    "error": "⁇ error",
    "unsupported": "⊘ unsupported",
    "skip": "",
    "n/a": "",
    "xfail": "⚑ xfail",
    "flaky": "⁇ flaky",
    "cpu-only": "◐ cpu only",
}
BLANK = ("skip", "n/a")


def oracle_verdict(attempts: list[tuple[str, str | None]]) -> str:
    statuses = [s for s, _device in attempts]
    if "pass" in statuses and any(s in FAILS for s in statuses):
        return "flaky"
    return statuses[-1]


def oracle_cell(history: list[list[tuple[str, str | None]]], backend: str) -> dict:
    """``history``: one check's attempts per run, newest run first."""
    window = history[: 1 + LOOKBACK]
    final = next((i for i, run in enumerate(window) if oracle_verdict(run) != "error"), None)
    chosen = history[final if final is not None else 0]
    verdict = oracle_verdict(chosen)
    on_cpu = backend in GPU and any(d is not None and d.startswith("cpu") for _s, d in chosen)
    if verdict == "pass" and on_cpu:
        verdict = "cpu-only"
    words = []
    if final is not None and final > 0:
        words.append("newer run inconclusive")
    if on_cpu and verdict != "cpu-only":
        words.append("cpu only")
    text = TEXT[verdict]
    marked = f"{text} ({', '.join(words)})" if words and verdict not in BLANK else text
    return {"verdict": verdict, "text": text, "marked": marked}


def oracle_column(alias: str, backend: str, cpu_only: bool) -> str:
    return f"{alias} · cpu only" if backend in GPU and cpu_only else alias


# --- the stored runs, as the ORM hands them to the report ----------------------------------

ALIAS = "img"
GPUS = {
    "rocm": [{"vendor": "amd", "arch": "gfx942", "index": 0}],
    "cuda": [{"vendor": "nvidia", "arch": "sm_90", "index": 0}],
    "cpu": [],
}
T0 = datetime(2026, 12, 1, tzinfo=timezone.utc)

attempt = st.tuples(st.sampled_from(STATUSES), st.sampled_from(("cpu", "cuda:0 GPU", None)))
world = st.fixed_dictionaries(
    {
        "backend": st.sampled_from(("cpu", "rocm", "cuda")),
        "cpu_only": st.booleans(),
        "suites": st.permutations(("smoke", "kernels", "features")),
        # newest first: per run, per suite's check, 1 to 3 attempts
        "runs": st.lists(
            st.fixed_dictionaries(
                {
                    "attempts": st.fixed_dictionaries(
                        {
                            s: st.lists(attempt, min_size=1, max_size=3)
                            for s in ("smoke", "kernels", "features")
                        }
                    ),
                    "ran": st.permutations(("smoke", "kernels", "features")),  # storage order
                }
            ),
            min_size=1,
            max_size=20,
        ),
    }
)


def stored(w: dict) -> tuple[list, dict]:
    """The runs and results of ``w`` as ``services/run.report`` reads them (ORM-shaped)."""
    backend, n = w["backend"], len(w["runs"])
    image = SimpleNamespace(alias=ALIAS, digest="sha256:" + "a" * 64, backend=backend)
    host = SimpleNamespace(name="h", spec={"gpus": GPUS[backend]})
    runs, results = [], {}
    for i, r in enumerate(w["runs"]):
        rid = f"run{n - i:03d}"
        started = T0 + timedelta(minutes=n - i)
        tasks = [
            SimpleNamespace(id=10 * (n - i) + k, suite=s, suite_spec={}, state="done")
            for k, s in enumerate(w["suites"])  # queued in the job's order
        ]
        task_of = {t.suite: t.id for t in tasks}
        rows = []
        for suite in r["ran"]:
            for a, (status, device) in enumerate(r["attempts"][suite], start=1):
                check = SimpleNamespace(
                    check_id=f"{suite}.x", version=1, feature=suite, kind="feature"
                )
                rows.append(
                    SimpleNamespace(
                        run_id=rid,
                        task_id=task_of[suite],
                        check=check,
                        attempt=a,
                        status=status,
                        message="",
                        device=device,
                        library=None,
                    )
                )
        runs.append(
            SimpleNamespace(
                id=rid,
                image=image,
                host=host,
                cpu_only=w["cpu_only"],
                job="j",
                started=started,
                ended=started + timedelta(seconds=30),
                tasks=tasks,
                state="done",
            )
        )
        results[rid] = rows
    return runs, results


def md_cells(md: str, column: str) -> dict[str, str]:
    """check → its cell's text in a Markdown matrix (the run's, or matrix render's)."""
    lines = [ln for ln in md.splitlines() if ln.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    at = head.index(column)
    out = {}
    for ln in lines[2:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        if cells[0].startswith("`"):
            out[cells[0].strip("`")] = cells[at]
    return out


def sinks(w: dict) -> dict:
    """Every sink's cells for ``w``: the run's printed matrix and JSON, matrix render's JSON
    and Markdown."""
    from orchestrator.matrix.document import Document, Header
    from orchestrator.matrix.layouts import observed_table
    from orchestrator.matrix.model import RunInfo, build
    from orchestrator.matrix.tiers import Policy
    from orchestrator.render.markdown import matrix_md
    from orchestrator.services import views
    from orchestrator.services.evidence import stamp
    from orchestrator.services.matrix import render_document

    runs, results = stored(w)
    observations = views.observations(runs, results)
    matrix = build(observations)  # as services/run.report builds and prints it
    run_md = matrix_md(matrix, text=views.cell_text)
    run_json = [views.matrix_json(matrix, r.id) for r in runs]
    columns = list(dict.fromkeys(o.column for o in observations))
    infos = [RunInfo(c, c, w["backend"], "h") for c in columns]
    table = observed_table("checks", observations, infos, "checks", "images", Policy())
    table, _stale = stamp(table, T0 + timedelta(days=1), 7)
    doc = Document(Header("unpublished", "2026-12-01"), table, {"layout": "checks"})
    return {
        "columns": columns,
        "rows": [r.key for r in matrix.rows],
        "run_md": run_md,
        "run_json": run_json,
        "render_json": json.loads(render_document(doc, "json")),
        "render_md": render_document(doc, "md"),
    }


@settings(max_examples=2600, deadline=None)
@given(world)
def test_every_sink_shows_the_oracles_cell(w):
    backend, column = w["backend"], oracle_column(ALIAS, w["backend"], w["cpu_only"])
    got = sinks(w)
    assert got["columns"] == [column]
    checks = [f"{s}.x" for s in w["suites"]]
    assert got["rows"] == checks  # the job's suite order, whatever order they ran in
    run_md, render_md = md_cells(got["run_md"], column), md_cells(got["render_md"], column)
    assert list(run_md) == list(render_md) == checks
    render_rows = {r["key"]: r["cells"][column] for r in got["render_json"]["rows"]}
    assert [r["key"] for r in got["render_json"]["rows"]] == checks
    for check, suite in zip(checks, w["suites"], strict=True):
        want = oracle_cell([r["attempts"][suite] for r in w["runs"]], backend)
        assert run_md[check] == want["marked"], (check, want)
        assert render_rows[check]["verdict"] == want["verdict"], (check, want)
        assert render_rows[check]["text"] == want["marked"], (check, want)
        assert render_md[check] == want["marked"], (check, want)
        # the run's JSON: the run whose attempts make the cell carries it
        owner = [j for j in got["run_json"] if any(c["check"] == check for c in j["cells"])]
        assert len(owner) == 1 and owner[0]["column"] == column
        (cell,) = [c for c in owner[0]["cells"] if c["check"] == check]
        assert (cell["verdict"], cell["text"]) == (want["verdict"], want["marked"])
