"""Evidence that cannot vouch for nothing, through the real CLI, engine and local registry
(distribution 2.8: cosign's ``.att`` tag): ``verify`` judges the newest attestation of the
type it reads, so a newer FAILED one wins over an older PASSED one; a test result that lists
no checks vouches for nothing; ``attest`` refuses a run imported from elsewhere unless told,
and then signs it as imported, which ``verify`` refuses unless told; and ``attest``'s files
never leave ``--out-dir``, never follow a planted link, and exist whenever their row does.

One image (valorch/base:bookworm) is pushed under three repositories, each with its own
attestations: ``newest`` (runs that pass, fail, and test nothing), ``qualify`` (a
qualification that holds, then one that fails) and ``imported``."""

from __future__ import annotations

import base64
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from registry_support import SMALL, registry_basic, run_cli  # noqa: F401 (pytest fixtures: requested by name)

pytestmark = pytest.mark.docker


def _run(env, image: str, *checks: str) -> str:
    """One ``valorch run`` of ``checks`` on ``image``; its run id."""
    suite = checks[0].split(".")[0]
    args = [a for c in checks for a in ("--check", c)]
    p = run_cli("run", "--image", image, "--suite", suite, *args, "--no-matrix", "--json", env=env)
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout)[0]["run"]


@pytest.fixture(scope="module")
def world(registry_basic, tmp_path_factory):  # noqa: F811 (the parameter is the fixture imported above)
    reg = registry_basic
    tmp = tmp_path_factory.mktemp("newest")
    env = {**reg.env(), "VALORCH_DB": str(tmp / "v.sqlite")}
    images = {}
    for repo in ("newest", "qualify", "imported"):
        digest = reg.push(SMALL, f"attest/{repo}:v1")
        images[repo] = f"{reg.host}/attest/{repo}:v1"
    key, pub = tmp / "k.pem", tmp / "pub.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(key)], check=True)
    subprocess.run(["openssl", "pkey", "-in", str(key), "-pubout", "-out", str(pub)], check=True)
    # the qualification's baseline: a published version of the qualify image alone
    runs = {"baseline": _run(env, images["qualify"], "selftest.pass")}
    p = run_cli("matrix", "publish", "--version", "v1", "--include-adhoc", env=env)
    assert p.returncode == 0, p.stderr
    runs["pass"] = _run(env, images["newest"], "selftest.pass")
    runs["fail"] = _run(env, images["newest"], "selftest.fail")
    # no PyTorch in the image: unsupported, so the test result lists no check at all
    runs["nothing"] = _run(env, images["newest"], "smoke.matmul.fp32")
    runs["imported"] = _run(env, images["imported"], "selftest.pass")
    return {"reg": reg, "tmp": tmp, "env": env, "images": images, "digest": digest,
            "key": key, "pub": pub, "runs": runs}  # fmt: skip


def attest(w, *args: str, env=None) -> subprocess.CompletedProcess:
    return run_cli("attest", *args, "--key", str(w["key"]), env=env or w["env"])


def verify(w, repo: str, *args: str) -> subprocess.CompletedProcess:
    return run_cli(
        "verify", "--image", w["images"][repo], "--key", str(w["pub"]), *args, env=w["env"]
    )


def test_a_newer_failed_result_wins_and_zero_checks_vouch_for_nothing(world):
    w = world
    out = str(w["tmp"] / "att")
    p = attest(w, "--run", w["runs"]["pass"], "--push", "--out-dir", out)
    assert p.returncode == 0, p.stderr
    v = verify(w, "newest")
    assert v.returncode == 0 and "verified:" in v.stdout, v.stderr
    # a newer FAILED test result of the same digest: it decides, the PASSED one is older
    p = attest(w, "--run", w["runs"]["fail"], "--push", "--out-dir", out)
    assert p.returncode == 0, p.stderr
    v = verify(w, "newest")
    assert v.returncode == 1, v.stdout + v.stderr
    listing = v.stderr.splitlines()
    assert [ln.split()[0] for ln in listing[:2]] == ["older", "DECIDES"], v.stderr
    assert "result PASSED: 1 passed" in listing[0] and "result FAILED" in listing[1]
    assert "the newest test result is FAILED: failed selftest.fail" in v.stderr
    # newer still: a run that tested nothing ("PASSED", 0 checks)
    p = attest(w, "--run", w["runs"]["nothing"], "--push", "--out-dir", out, "--json")
    assert p.returncode == 0 and json.loads(p.stdout)[0]["result"] == "PASSED", p.stderr
    v = verify(w, "newest", "--json")
    assert v.returncode == 1, v.stderr
    doc = json.loads(v.stdout)
    assert (doc["verdict"], doc["exit_code"]) == ("not verified", 1)
    assert [r["code"] for r in doc["reasons"]] == ["no tests"]
    assert "lists no passed check (0 checks" in doc["reasons"][0]["text"]
    assert [a["role"] for a in doc["attestations"]] == ["superseded", "superseded", "decides"]
    assert doc["decided_by"] == doc["attestations"][2]["where"]


def test_a_newer_failed_qualification_wins(world, tmp_path):
    w = world
    job = tmp_path / "release.yaml"
    for name, checks in (("q1", "[selftest.pass]"), ("q2", "[selftest.pass, selftest.fail]")):
        job.write_text(
            f"name: release\nimages:\n  - {w['images']['qualify']}\nsuites:\n"
            f"  - name: selftest\n    checks: {checks}\n"
        )
        q = run_cli("qualify", "--job", str(job), "--baseline", "v1", "--out-dir",
                    str(tmp_path / name), env=w["env"])  # fmt: skip
        assert q.returncode == (0 if name == "q1" else 1), q.stdout + q.stderr
        p = attest(w, "--qualify", str(tmp_path / name), "--push", "--out-dir", str(tmp_path))
        assert p.returncode == 0, p.stderr
    v = verify(w, "qualify", "--require", "qualified")
    assert v.returncode == 1, v.stdout + v.stderr
    older, newest = [ln for ln in v.stderr.splitlines() if "verification_summary" in ln]
    assert older.split()[0] == "older" and "qualification PASSED" in older
    assert newest.split()[0] == "DECIDES" and "qualification FAILED" in newest
    assert "the newest qualification is FAILED, not PASSED" in v.stderr


def test_an_imported_run_is_refused_or_signed_as_imported(world):
    w = world
    export = w["tmp"] / "export.json"
    p = run_cli("results", "export", w["runs"]["imported"], "--out", str(export), env=w["env"])
    assert p.returncode == 0, p.stderr
    other = {**w["env"], "VALORCH_DB": str(w["tmp"] / "elsewhere.sqlite")}
    p = run_cli("results", "import", str(export), env=other)
    assert p.returncode == 0, p.stderr
    out = w["tmp"] / "imported"
    refused = attest(w, "--run", w["runs"]["imported"], "--out-dir", str(out), env=other)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "were imported, not run here" in refused.stderr and str(export) in refused.stderr
    assert "--allow-imported" in refused.stderr and not out.exists()
    p = attest(w, "--run", w["runs"]["imported"], "--allow-imported", "--push",
               "--out-dir", str(out), "--json", env=other)  # fmt: skip
    assert p.returncode == 0, p.stderr
    (made,) = json.loads(p.stdout)
    (line,) = Path(made["file"]).read_text().splitlines()
    ann = json.loads(base64.b64decode(json.loads(line)["payload"]))["predicate"]
    ann = ann["configuration"][0]["annotations"]
    assert ann["provenance"] == "imported" and str(export) in ann["importedFrom"]
    v = verify(w, "imported")
    assert v.returncode == 1, v.stdout + v.stderr
    assert "[imported: run " in v.stderr and "not measured by valorch" in v.stderr
    v = verify(w, "imported", "--allow-imported")
    assert v.returncode == 0 and "verified:" in v.stdout, v.stderr


def _rows(db: Path) -> int:
    with sqlite3.connect(db) as c:
        return c.execute("select count(*) from attestation").fetchone()[0]


def test_attest_files_stay_in_out_dir_and_exist_whenever_their_row_does(world, tmp_path):
    w = world
    run = w["runs"]["pass"]
    db = Path(w["env"]["VALORCH_DB"])
    # a link planted at the file's name: replaced by the file, its target left alone
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    name = f"{w['digest'].replace(':', '-')}.intoto.jsonl"
    (out / name).symlink_to(victim)
    p = attest(w, "--run", run, "--out-dir", str(out), "--json")
    assert p.returncode == 0, p.stderr
    assert victim.read_text() == "keep me\n"
    assert not (out / name).is_symlink() and json.loads((out / name).read_text())["payload"]
    assert sorted(f.name for f in out.iterdir()) == [name]  # no temporary file left
    # a recorded digest that climbs out of --out-dir: refused before anything is signed
    bad_db = tmp_path / "bad.sqlite"
    with sqlite3.connect(db) as src, sqlite3.connect(bad_db) as dst:
        src.backup(dst)
    climb = "sha256:" + "../" * 21 + "x"  # as long as a real digest
    with sqlite3.connect(bad_db) as c:
        c.execute("update image set digest = ?", (climb,))
    before = _rows(bad_db)
    bad_env = {**w["env"], "VALORCH_DB": str(bad_db)}
    p = attest(w, "--run", run, "--out-dir", str(tmp_path / "deep" / "er"), env=bad_env)
    assert p.returncode == 2 and "is not sha256:<64 hex digits>" in p.stderr, p.stderr
    assert not (tmp_path / "deep").exists() and _rows(bad_db) == before
    assert not list(tmp_path.glob("*.intoto.jsonl"))
    # a full disk: exit 3, no partial file and no row
    full = tmp_path / "full"
    full.mkdir()
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(full)],
                           capture_output=True, text=True)  # fmt: skip
    if mount.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here for the full-disk case: {mount.stderr}")
    try:
        subprocess.run(["dd", "if=/dev/zero", f"of={full}/filler", "bs=4k"], capture_output=True)
        before = _rows(db)
        p = attest(w, "--run", run, "--out-dir", str(full))
        assert p.returncode == 3 and "the disk is full" in p.stderr, p.stdout + p.stderr
        assert "Traceback" not in p.stderr
        assert _rows(db) == before
        assert sorted(f.name for f in full.iterdir()) == ["filler"]
    finally:
        subprocess.run(["umount", str(full)], capture_output=True)
