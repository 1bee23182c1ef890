import json
import socket

from sqlalchemy import insert

from orchestrator.services import views
from orchestrator.spec import CheckResult, HostSpec, ImageSpec, SuiteRef
from orchestrator.store import queries, reads, tables
from orchestrator.store.db import open_engine, session_factory

DIGEST = "sha256:" + "ab" * 32


def _synthetic_run(db):
    with session_factory(open_engine(str(db)))() as s:
        run = queries.start_run(
            s,
            batch="b",
            job="j",
            digest=DIGEST,
            image=ImageSpec(
                alias="img", reference="img:1", backend="cpu", components={"pytorch": "2.13.0"}
            ),
            host=HostSpec(name="h"),
            executor="docker",
            spec_hash="x",
            cpu_only=False,
            suites=[SuiteRef(name="smoke")],
        )
        task = run.tasks[0]
        queries.add_results(
            s,
            run.id,
            task.id,
            [
                CheckResult(check="k.a", status="fail"),
                CheckResult(check="k.a", status="pass", attempt=2, samples=[1.0]),
            ],
        )
        s.execute(
            insert(tables.inventory).values(
                run_id=run.id, component="torch", value="2.13.0", source="pip", evidence="dist"
            )
        )
        run.state, run.ended = "done", queries.now()
        s.commit()
        return run.id


def test_export_import_moves_runs_between_databases_idempotently(cli, tmp_path):
    src, dst = tmp_path / "src.sqlite", tmp_path / "dst.sqlite"
    r = cli(
        "run",
        "--image",
        "host",
        "--suite",
        "selftest",
        "--check",
        "selftest.pass",
        "--check",
        "selftest.fail",
        "--no-gate",
        "--json",
        db=src,
    )
    assert r.returncode == 0, r.stderr
    host_run = json.loads(cli("results", "list", "--json", db=src).stdout)[0]["run"]
    synthetic = _synthetic_run(src)

    export = tmp_path / "runs.json"
    r = cli("results", "export", host_run, synthetic[:8], "--out", str(export), db=src)
    assert r.returncode == 0, r.stderr
    doc = json.loads(export.read_text())
    assert doc["format"] == "valorch-results" and doc["schema"] == 1
    assert {x["id"] for x in doc["runs"]} == {host_run, synthetic}
    assert len(doc["inventory"]) == 1 and len(doc["images"]) == 2

    r = cli("results", "import", str(export), "--json", db=dst)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"runs": 2, "tasks": 2, "results": 4, "inventory": 1}
    r = cli("results", "import", str(export), db=dst)
    assert r.returncode == 0 and "0 new of 2 runs, 0 new results" in r.stderr

    # same uuids, same statuses, same attempts on the other side
    shown = {}
    for db in (src, dst):
        with session_factory(open_engine(str(db)))() as s:
            shown[db] = [views.run_json(reads.shown(s, i)) for i in (host_run, synthetic)]
    # ... and each imported run says where it came from
    for run in shown[dst]:
        assert run.pop("origin") == f"import:{socket.gethostname()}:{export.resolve()}"
        assert run.pop("provenance") == f"imported from {socket.gethostname()}:{export.resolve()}"
    for run in shown[src]:
        assert run.pop("origin") is None and run.pop("provenance") is None
    assert shown[src] == shown[dst] and shown[dst][0]["counts"] == {"pass": 1, "fail": 1}
    with session_factory(open_engine(str(dst)))() as s:
        run = queries.get_run(s, synthetic)
        assert run.image.digest == DIGEST and run.image.components == {"pytorch": "2.13.0"}
        assert [r.samples for r in queries.run_results(s, synthetic)] == [[], [1.0]]


def test_import_refuses_what_is_not_an_export(cli, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something"}')
    r = cli("results", "import", str(bad))
    assert r.returncode == 2 and "not a valorch results export" in r.stderr
    bad.write_text("{nope")
    r = cli("results", "import", str(bad))
    assert r.returncode == 2 and "bad.json:1" in r.stderr
    r = cli("results", "export", "0000dead")
    assert r.returncode == 2 and "no run '0000dead'" in r.stderr
