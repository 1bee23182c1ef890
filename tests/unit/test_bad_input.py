"""Hardening against bad input: what the corpus cannot show by exit codes alone."""

import fcntl
import io
import json
import os
import tarfile
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from orchestrator import yamlio
from orchestrator.catalog.core import load_job
from orchestrator.errors import InputError, SpecError
from orchestrator.executors.base import ship_workload, workload_archives
from orchestrator.executors.workload_files import WorkloadError, contained_files
from orchestrator.regression import known_issues
from orchestrator.spec import HostSpec, ImageSpec, SuiteRef, Task
from orchestrator.store.db import open_engine

ROOT = Path(__file__).resolve().parents[2]
GOOD_EXPORT = ROOT / "tests" / "corpus" / "files" / "good_export.json"


def test_duplicate_keys_name_both_lines(tmp_path):
    f = tmp_path / "job.yaml"
    f.write_text(
        "name: a\nimages: [host]\nsuites:\n  - name: smoke\n    deadline: 1\n\n    deadline: 2\n"
    )
    with pytest.raises(SpecError) as exc:
        yamlio.load(f)
    assert f"{f}:7: duplicate key 'deadline' (first given at line 5)" in str(exc.value)


def test_same_key_in_sibling_mappings_and_anchors_are_fine(tmp_path):
    f = tmp_path / "ok.yaml"
    f.write_text("a: &x {k: 1}\nb: *x\nc: {<<: *x, j: 2}\nlist: [{k: 1}, {k: 2}]\n")
    assert yamlio.load(f).data["c"] == {"k": 1, "j": 2}


def test_loader_is_libyaml_when_available_and_parses_once():
    if yaml.__with_libyaml__:
        assert issubclass(yamlio._Loader, yaml.CSafeLoader)
    doc = yamlio.load(ROOT / "jobs" / "commands-example.yaml")
    assert doc.data["name"] == "commands-example" and doc.line(("suites", 1, "pytest", "path")) > 1


def test_bad_date_and_non_utf8_name_line_and_column(tmp_path):
    f = tmp_path / "k.yaml"
    f.write_text("issues:\n  - check: x\n    reason: r\n    expires: 2026-13-45\n")
    with pytest.raises(SpecError, match=r"k.yaml:4:14: .*'2026-13-45' looks like a date"):
        known_issues.load(f)
    f.write_bytes(b"issues:\n  - check: caf\xe9\n")
    with pytest.raises(SpecError, match=r"k.yaml:2:15: not UTF-8 text \(byte 0xe9\)"):
        known_issues.load(f)


def test_known_issue_naming_no_check_is_a_warning_with_its_line(tmp_path):
    f = tmp_path / "k.yaml"
    f.write_text(
        "issues:\n  - check: selftest.*\n    reason: r\n  - check: no.such.check\n    reason: r\n"
    )
    loaded = known_issues.load(f)
    assert len(loaded.entries) == 2
    assert loaded.warnings == (
        f"{f}:4: known issue: check 'no.such.check' matches no check valorch knows "
        "(valorch suites show SUITE lists them); this entry excuses nothing",
    )


def test_suite_deadlines_are_finite_and_bounded():
    for bad in (float("inf"), float("nan"), 1e300, 0, -1):
        with pytest.raises(ValidationError):
            SuiteRef(name="smoke", deadline=bad)
        with pytest.raises(ValidationError):
            SuiteRef(name="smoke", timeout=bad)
    assert SuiteRef(name="smoke", deadline=3600, timeout=7 * 24 * 3600).timeout == 604800


# --- workload paths -------------------------------------------------------------------------


def _job(tmp_path, path):
    job = tmp_path / "jobs" / "job.yaml"
    job.parent.mkdir(parents=True, exist_ok=True)
    job.write_text(
        f"name: w\nimages: [host]\nsuites:\n  - name: pytest\n    pytest:\n      path: {path}\n"
    )
    return job


def _task(job):
    return Task(
        image=ImageSpec(alias="host", reference="host", backend="cpu"),
        suite=job.suites[0],
        host=HostSpec(name="h"),
        checks=(),
    )


def test_workload_outside_the_job_needs_a_workload_root(tmp_path):
    outside = tmp_path / "shared_tests"
    outside.mkdir()
    (outside / "test_x.py").write_text("def test_x():\n    pass\n")
    job = _job(tmp_path, "../shared_tests")
    with pytest.raises(SpecError, match="outside the job's directory") as exc:
        load_job(job)
    assert "suites.0.pytest.path" in str(exc.value) and "--workload-root" in str(exc.value)
    spec = load_job(job, workload_roots=[outside])
    assert spec.suites[0].pytest.source == str(outside.resolve())


def test_symlinks_are_resolved_inside_and_refused_outside(tmp_path):
    wl = tmp_path / "jobs" / "wl"
    wl.mkdir(parents=True)
    (wl / "test_a.py").write_text("A = 1\n")
    (wl / "alias_a.py").symlink_to("test_a.py")  # inside: shipped as a regular file
    job = load_job(_job(tmp_path, "wl"))
    with tarfile.open(fileobj=io.BytesIO(workload_archives(_task(job))[0])) as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert not any(m.issym() or m.islnk() for m in members.values())
        assert tar.extractfile(members["workloads/wl/alias_a.py"]).read() == b"A = 1\n"
    dest = tmp_path / "host-copy"
    ship_workload(_task(job), dest)
    copied = dest / "workloads" / "wl" / "alias_a.py"
    assert not copied.is_symlink() and copied.read_text() == "A = 1\n"

    (wl / "passwd.py").symlink_to("/etc/passwd")  # outside: refused, at load and at packing
    with pytest.raises(
        SpecError, match=r"passwd.py is a symlink to /etc/passwd, outside the workload"
    ):
        load_job(_job(tmp_path, "wl"))
    with pytest.raises(WorkloadError):
        workload_archives(_task(job))
    with pytest.raises(WorkloadError):
        ship_workload(_task(job), tmp_path / "again")


def test_link_named_as_the_workload_resolves_where_it_points(tmp_path):
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "t.py").symlink_to("/etc/passwd")
    with pytest.raises(SpecError, match="outside the job's directory"):
        load_job(_job(tmp_path, "t.py"))
    with pytest.raises(WorkloadError, match="directory"):
        d = tmp_path / "d"
        d.mkdir()
        (d / "sub").symlink_to(tmp_path / "jobs")
        contained_files(d)


# --- databases ------------------------------------------------------------------------------


def test_a_leftover_migrate_lock_is_removed_and_a_held_one_kept(tmp_path):
    db = tmp_path / "v.sqlite"
    open_engine(str(db)).dispose()
    lock = Path(str(db) + ".migrate-lock")
    assert not lock.exists()  # the migration removed its own lock file
    lock.write_text("12345\n")  # left by a crashed valorch (its flock died with it)
    open_engine(str(db)).dispose()
    assert not lock.exists()
    lock.write_text("")
    with open(lock, "a+") as held:  # a live migration holds it
        fcntl.flock(held, fcntl.LOCK_EX)
        open_engine(str(db)).dispose()
        assert lock.exists()
    os.unlink(lock)


def test_import_validates_all_first_and_dry_run_writes_nothing(tmp_path):
    from orchestrator.services import results
    from orchestrator.services.run_list import listing
    from orchestrator.services.session import sessions

    factory = sessions(str(tmp_path / "v.sqlite"))
    doc = results.read_export(GOOD_EXPORT)
    assert results.import_(factory, doc, "x", dry_run=True)["runs"] == 1
    assert listing(str(tmp_path / "v.sqlite"), 10, None) == []
    bad = json.loads(GOOD_EXPORT.read_text())
    bad["results"][1]["status"] = "exploded"
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(bad))
    with pytest.raises(InputError, match=r"results\[1\]\.status"):
        results.read_export(f)
    with pytest.raises(InputError, match=r"results\[1\]\.status"):
        results.import_(factory, bad, str(f))
    assert listing(str(tmp_path / "v.sqlite"), 10, None) == []  # nothing stored half-way
    assert results.import_(factory, doc, "x")["results"] == 2
