"""What an export brings is data, through the real CLI: an imported run keeps where it came
from and is never resumed here (its tasks' commands never run), a field without its format
is refused naming it (nothing stored), the site's repro command quotes every argument, `db
check` names stored blobs of the wrong shape, and a clock before valorch's epoch is refused
before anything runs."""

from __future__ import annotations

import html
import json
import re
import shlex
import sqlite3

import pytest


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A host run with a passing and a failing check, and its export."""
    from conftest import run_cli

    where = tmp_path_factory.mktemp("exported")
    db = where / "source.sqlite"
    proc = run_cli(
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
        db=db,
    )
    assert proc.returncode == 0, proc.stderr
    run_id = sqlite3.connect(db).execute("SELECT id FROM run").fetchone()[0]
    out = where / "export.json"
    assert run_cli("results", "export", run_id, "--out", str(out), db=db).returncode == 0
    return db, out


def _doc(exported):
    return json.loads(exported[1].read_text())


def _stored_runs(db) -> int:
    if not db.exists():
        return 0
    con = sqlite3.connect(db)
    if not con.execute("SELECT name FROM sqlite_master WHERE name = 'run'").fetchone():
        return 0
    return con.execute("SELECT count(*) FROM run").fetchone()[0]


def test_an_imported_run_is_never_resumed_and_says_where_it_came_from(cli, tmp_path, exported):
    marker = tmp_path / "FILE"
    doc = _doc(exported)
    run = doc["runs"][0]
    run["state"], run["ended"] = "interrupted", None
    doc["tasks"] = [
        {
            **doc["tasks"][0],
            "suite": "command",
            "state": "queued",
            "ended": None,
            "suite_spec": {
                "name": "command",
                "commands": [{"id": "pwn", "argv": ["sh", "-c", f"id > {marker}"]}],
            },
        }
    ]
    doc["results"] = []
    evil = tmp_path / "evil.json"
    evil.write_text(json.dumps(doc))
    assert cli("results", "import", str(evil)).returncode == 0

    proc = cli("run", "--resume", run["batch"])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "imported from" in proc.stderr and str(evil) in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not marker.exists()
    assert sqlite3.connect(cli.db).execute("SELECT state FROM task").fetchone() == ("queued",)

    shown = cli("results", "show", run["id"])
    assert "imported from" in shown.stdout and str(evil) in shown.stdout, shown.stdout
    data = json.loads(cli("results", "show", run["id"], "--json").stdout)
    assert data["provenance"].startswith("imported from ") and str(evil) in data["origin"]


@pytest.mark.parametrize(
    ("place", "value", "named"),
    [
        (("images", 0, "digest"), "sha256:$(touch /tmp/x)", "images[0].digest"),
        (("images", 0, "alias"), "host", "images[0]"),
        (("runs", 0, "meta"), {"image": 3}, "runs[0].meta"),
        (("results", 0, "metrics"), {"x": float("nan")}, "results[0].metrics"),
    ],
)
def test_a_field_without_its_format_is_refused_naming_it(
    cli, tmp_path, exported, place, value, named
):
    doc = _doc(exported)
    if place[:2] == ("images", 0) and place[2] == "alias":
        doc["images"][0]["reference"] = "evil.example/x:1"
        doc["runs"][0]["image"] = ["evil.example/x:1", None, "host"]
    else:
        target = doc
        for key in place[:-1]:
            target = target[key]
        target[place[-1]] = value
        if place == ("images", 0, "digest"):  # the run still names its image
            doc["runs"][0]["image"][1] = value
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(doc))  # NaN written as JSON's non-standard NaN
    proc = cli("results", "import", str(path))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert named in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert _stored_runs(cli.db) == 0


def test_db_check_names_stored_blobs_of_the_wrong_shape(cli, exported):
    cli.db.write_bytes(exported[0].read_bytes())
    con = sqlite3.connect(cli.db)
    con.execute("""UPDATE run SET meta = '{"image": 3}'""")
    con.execute("""UPDATE host SET spec = '{"name": "vm", "gpus": ["x"]}'""")
    con.execute("""UPDATE task SET suite_spec = '{"name": "selftest", "commands": 5}'""")
    con.execute("""UPDATE result SET metrics = '{"x": NaN}'""")
    con.commit()
    con.close()
    proc = cli("db", "check")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 3, out
    for named in ("meta.image", "spec.gpus[0]", "suite_spec.commands", "metrics.x"):
        assert named in out, out
    assert "Traceback" not in out
    # a NaN a store holds from before leaves as JSON can carry it: the export stays JSON
    run_id = sqlite3.connect(cli.db).execute("SELECT id FROM run").fetchone()[0]
    out_file = cli.db.parent / "out.json"
    assert cli("results", "export", run_id, "--out", str(out_file)).returncode == 0
    doc = json.loads(out_file.read_text(), parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
    assert doc["results"][0]["metrics"] == {"x": "NaN"}
    # the site, which reads the meta and the host's spec, says so too: no traceback
    proc = cli("site", "build", "--out", str(cli.db.parent / "site"))
    assert proc.returncode == 3 and "damaged store" in proc.stderr, proc.stderr
    assert "meta.image" in proc.stderr and "Traceback" not in proc.stderr


def test_the_site_repro_quotes_every_argument(cli, tmp_path, exported):
    """A digest that no import lets in (a store written by hand) still reaches the page's
    repro command as one quoted word."""
    cli.db.write_bytes(exported[0].read_bytes())
    hostile = "sha256:$(touch /tmp/pwned)"
    con = sqlite3.connect(cli.db)
    con.execute(
        "UPDATE image SET alias = 'img', reference = 'registry.example/x:1', digest = ?", (hostile,)
    )
    con.execute("UPDATE run SET executor = 'docker'")
    con.commit()
    con.close()
    site = tmp_path / "site"
    proc = cli("site", "build", "--out", str(site))
    assert proc.returncode == 0, proc.stderr
    pages = "".join(p.read_text() for p in (site / "runs").glob("*.html"))
    repros = [html.unescape(m) for m in re.findall(r"(valorch run --image[^<]*)", pages)]
    assert repros, "no repro command on the run page"
    for command in repros:
        argv = shlex.split(command)
        assert argv[argv.index("--image") + 1] == f"registry.example/x@{hostile}", command


CLOCK_1999 = """
import datetime as _dt


class _Past(_dt.datetime):
    @classmethod
    def now(cls, tz=None):
        return super().now(tz).replace(year=1999)


_dt.datetime = _Past
"""


def test_a_run_under_a_clock_before_2020_is_refused_before_it_runs(cli, tmp_path):
    """One rule for valid times (bounds.EPOCH_ISO): what the store would refuse at `db check`
    and an import would refuse, a run refuses to stamp. The clock is set back in the CLI's
    own interpreter (a sitecustomize module), the machine's stays as it is."""
    import os

    from conftest import ROOT

    (tmp_path / "sitecustomize.py").write_text(CLOCK_1999)
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    proc = cli("run", "--image", "host", "--suite", "selftest", "--check", "selftest.pass", env=env)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "clock says 1999-" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert _stored_runs(cli.db) == 0


def test_attest_names_no_file_after_a_digest_that_is_not_one(cli, tmp_path, exported):
    """A stored digest of the right length with a path in it (a store written by hand:
    no import lets it in) never becomes a file name outside --out-dir."""
    import subprocess

    cli.db.write_bytes(exported[0].read_bytes())
    escape = "sha256:" + "/../../../../../../../../../../../../../../../../../../tmp/x" + "a" * 4
    assert len(escape) == 71
    con = sqlite3.connect(cli.db)
    con.execute("UPDATE image SET digest = ?", (escape,))
    con.commit()
    run_id = con.execute("SELECT id FROM run").fetchone()[0]
    con.close()
    key = tmp_path / "k.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(key)], check=True)
    out = tmp_path / "deep" / "out"
    proc = cli("attest", "--run", run_id, "--key", str(key), "--out-dir", str(out))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "no sha256 image digest" in proc.stderr and "Traceback" not in proc.stderr
    assert not list(tmp_path.rglob("*.intoto.jsonl"))
