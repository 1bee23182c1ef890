"""The read-only commands start fast by importing only what they use: a command line imports
the module of the command it names and no other; the CLI's module loads no store, no models
and no satellite; ``results list``, ``results show``, ``matrix render`` and the run plan's
history read the store with SQLAlchemy Core (store/reads.py) and load no ORM; ``results
show`` and ``matrix render`` no pydantic either, and nothing of the Docker SDK, the
templates, the migrations, the registry client or the attestations; ``matrix render``
loads jinja2 only for HTML.

Checked by the modules each process has executed (no timing: docs/benchmarks.md has the
figures, bench/bench_reads.py measures them)."""

import json
import subprocess
import sys

import pytest
from conftest import ROOT

#: runs the CLI with the given arguments, then prints the modules it executed: a module
#: importlib's LazyLoader only named (not executed yet) and a name a package marked absent
#: (None) do not count
RUN_AND_LIST_MODULES = """
import atexit, json, sys
def executed():
    return sorted(n for n, m in sys.modules.items()
                  if m is not None and type(m).__name__ != "_LazyModule")
atexit.register(lambda: print("MODULES " + json.dumps(executed())))
sys.argv = ["valorch", *sys.argv[1:]]
from orchestrator.cli import main
main()
"""

#: SQLAlchemy's ORM and the classes mapped with it: the write paths' alone
ORM = ("sqlalchemy.orm", "orchestrator.store.models")
#: every command module but the one ``results list`` names
OTHER_COMMANDS = (
    "orchestrator.commands.run",
    "orchestrator.commands.accept",
    "orchestrator.commands.qualify",
    "orchestrator.commands.db",
    "orchestrator.commands.images",
    "orchestrator.ext.site.command",
    "orchestrator.ext.attest.command",
)

#: reads the plan's history from a store as ``valorch run`` does (services/run.history on
#: the command's deferred session factory), then prints the modules executed
READ_HISTORY_AND_LIST_MODULES = """
import json, sys
from orchestrator.services.run import history
from orchestrator.services.session import Deferred
print("HISTORY " + json.dumps(sorted(f"{i}/{s}" for i, s in history(Deferred(sys.argv[1])))))
print("MODULES " + json.dumps(sorted(n for n, m in sys.modules.items()
                                     if m is not None and type(m).__name__ != "_LazyModule")))
"""

#: never needed to read the store or print help
HEAVY = ("docker", "jinja2", "alembic", "requests", "kubernetes", "psycopg", "markupsafe")
#: the satellites' and the writers' modules: attestations, the registry, containers, the site
SATELLITES = (
    "orchestrator.ext.attest.service",
    "orchestrator.ext.attest.signing",
    "orchestrator.registry",
    "orchestrator.executors",
    "orchestrator.render.html",
    "orchestrator.ext.site.service",
    "orchestrator.ext.site.pages",
    "orchestrator.store.transfer",
)


def printed_and_executed(*args: str, code: int = 0) -> tuple[str, set[str]]:
    """What the CLI printed with ``args``, and the modules it executed."""
    done = subprocess.run(
        [sys.executable, "-c", RUN_AND_LIST_MODULES, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert done.returncode == code, done.stdout[-2000:] + done.stderr[-2000:]
    printed, names = done.stdout.rsplit("MODULES ", 1)
    return printed, set(json.loads(names))


def executed(*args: str, code: int = 0) -> set[str]:
    return printed_and_executed(*args, code=code)[1]


def loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """The names of ``names`` (packages included) that ``modules`` holds."""
    return sorted(m for m in modules if m in names or m.startswith(tuple(n + "." for n in names)))


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> tuple[str, str, str, set[str]]:
    """A store with one finished run (host, selftest.pass): the database URL, the run id, and
    what ``results list --json`` printed and executed reading it."""
    db = str(tmp_path_factory.mktemp("store") / "v.sqlite")
    executed(
        "run", "--image", "host", "--suite", "selftest", "--check", "selftest.pass", "--db", db
    )
    printed, modules = printed_and_executed("results", "list", "--db", db, "--json")
    return db, json.loads(printed)[0]["run"], printed, modules


def test_help_loads_no_store_no_models_and_no_satellite():
    modules = executed("--help")
    assert "orchestrator.commands.results" in modules  # every command module is loaded
    assert loaded(modules, ("sqlalchemy", "pydantic", "yaml", *HEAVY)) == []
    assert loaded(modules, ("orchestrator.spec", "orchestrator.store", *SATELLITES)) == []


def test_results_list_reads_the_store_and_nothing_else(store):
    db, *_ = store
    modules = executed("results", "list", "--db", db)
    assert "orchestrator.store.reads" in modules  # the Core statements
    assert loaded(modules, ("yaml", *HEAVY)) == []
    # the job and result models (pydantic) are not built to list runs
    assert loaded(modules, ("orchestrator.spec", *SATELLITES)) == []


def test_results_list_loads_no_orm(store):
    _, run_id, listed, modules = store
    assert [r["run"] for r in json.loads(listed)] == [run_id]  # the run, read with Core
    assert "orchestrator.store.reads" in modules
    assert loaded(modules, ORM) == []


def test_a_command_line_imports_only_the_command_it_names(store):
    _, _, _, modules = store
    assert "orchestrator.commands.results" in modules
    assert loaded(modules, OTHER_COMMANDS) == []
    assert "orchestrator.commands.images" in executed("images", "list")


def test_the_runs_history_read_loads_no_orm(store):
    """The plan of ``valorch run`` reads the last durations before its first container starts,
    with Core: the ORM loads later, at the batch's first session."""
    db, *_ = store
    done = subprocess.run(
        [sys.executable, "-c", READ_HISTORY_AND_LIST_MODULES, db],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = dict(ln.split(" ", 1) for ln in done.stdout.splitlines())
    assert json.loads(lines["HISTORY"]) == ["host/selftest"]  # the run's suite, read
    modules = set(json.loads(lines["MODULES"]))
    assert "orchestrator.store.reads" in modules
    assert loaded(modules, ORM) == []


def test_results_show_loads_no_attestation_registry_or_templates(store):
    db, run_id, *_ = store
    modules = executed("results", "show", run_id, "--db", db)
    assert "orchestrator.services.triage" in modules  # a run's red checks say why
    assert loaded(modules, HEAVY) == []
    assert loaded(modules, (*ORM, "pydantic", "yaml")) == []  # Core reads, stored triage
    assert loaded(modules, SATELLITES) == []


def test_matrix_render_loads_jinja2_only_for_html(store):
    db, *_ = store
    modules = executed("matrix", "render", "--db", db)
    assert "orchestrator.services.matrix" in modules
    assert loaded(modules, HEAVY) == []
    assert loaded(modules, (*ORM, "pydantic", "yaml")) == []  # Core reads, statuses.py
    assert loaded(modules, SATELLITES) == []
    html = executed("matrix", "render", "--db", db, "--format", "html")
    assert "jinja2" in html and "orchestrator.render.html" in html


def test_the_store_listings_load_no_orm_and_no_pydantic(store):
    db, *_ = store
    for argv in (
        ("inventory", "list"),
        ("baseline", "list"),
        ("matrix", "versions"),
        ("accept", "list"),
    ):
        modules = executed(*argv, "--db", db)
        assert loaded(modules, (*ORM, "pydantic", *HEAVY)) == [], argv
