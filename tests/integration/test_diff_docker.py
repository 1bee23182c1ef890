"""valorch diff / baseline / qualify on real runs in the local test images."""

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TORCH1 = "cpu_debian12_py3.11_pytorch_1.13"
TORCH2 = "cpu_debian12_py3.11_pytorch_2.13"
# Two runs on a shared 2-core machine differ in timing by more than 5 % for reasons that
# have nothing to do with the image; the gates below are about status flips.
LOOSE = ("--threshold", "3")


def run_id(cli, alias):
    proc = cli("run", "--image", alias, "--json")
    assert proc.returncode == 0, proc.stderr
    (run,) = json.loads(proc.stdout)
    return run["run"]


def job_file(tmp_path, alias):
    path = tmp_path / "qualify-job.yaml"
    path.write_text(f"name: qualify-test\nimages: [{alias}]\nsuites: [smoke]\n")
    return path


def test_diff_two_pytorch_versions(cli):
    a, b = run_id(cli, TORCH1), run_id(cli, TORCH2)
    proc = cli("diff", a[:8], b, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["base"]["runs"] == [a] and data["head"]["runs"] == [b]
    assert data["base"]["digests"][TORCH1].startswith("sha256:")
    assert data["head"]["environments"] == [TORCH2]
    assert data["regressed"] is False
    changes = {c["check"]: c for c in data["changes"]}
    # the same smoke checks pass in both: the matmul is compared by its timing samples
    mm = changes.get("smoke.matmul.fp32")
    geo = {g["environment"]: g for g in data["geomean"]}
    assert f"{TORCH1} → {TORCH2}" in geo and geo[f"{TORCH1} → {TORCH2}"]["checks"] >= 1
    if mm is not None:
        assert mm["timing"]["n_base"] >= 10 and mm["timing"]["n_head"] >= 10
        assert mm["kind"] in ("faster", "slower", "noise")
    # markdown and junit of the same diff
    md = cli("diff", a, b, "--format", "md")
    assert md.returncode == 0 and f"{TORCH1} → {TORCH2}" in md.stdout
    # an unknown side is bad input
    bad = cli("diff", a, "no-such-run")
    assert bad.returncode == 2 and "no-such-run" in bad.stderr and "Traceback" not in bad.stderr


def test_baseline_and_qualify_pass_then_planted_regression(cli, tmp_path):
    base = run_id(cli, TORCH1)
    proc = cli("baseline", "set", "rel-1", base[:8])
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(cli("baseline", "list", "--json").stdout)
    assert [(b["name"], b["run"]) for b in listed] == [("rel-1", base)]
    job = job_file(tmp_path, TORCH1)

    # same image, same catalog: qualified, three reports written
    out = tmp_path / "q-ok"
    proc = cli("qualify", "--job", str(job), "--baseline", "rel-1", "--out-dir", str(out), *LOOSE)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    for name in ("report.md", "report.html", "report.junit.xml"):
        assert (out / name).is_file()
    assert "no regression" in (out / "report.md").read_text()
    assert 'failures="0"' in (out / "report.junit.xml").read_text()

    # a catalog that expects another PyTorch: env.version.pytorch goes pass → fail = REGRESSED
    cat = tmp_path / "catalog"
    shutil.copytree(ROOT / "images", cat)
    text = (cat / "local-test.yaml").read_text()
    assert 'pytorch: "1.13"' in text
    (cat / "local-test.yaml").write_text(text.replace('pytorch: "1.13"', 'pytorch: "9.9"', 1))
    out = tmp_path / "q-bad"
    proc = cli(
        "qualify",
        "--job",
        str(job),
        "--baseline",
        "rel-1",
        "--out-dir",
        str(out),
        "--catalog",
        str(cat),
        *LOOSE,
    )
    assert proc.returncode == 1, proc.stderr + proc.stdout
    md = (out / "report.md").read_text()
    assert (
        "**1 failing (1 regressed)**" in md
        and "`env.version.pytorch`" in md
        and "expected 9.9" in md
    )
    junit = ET.fromstring((out / "report.junit.xml").read_text())
    failed = [c.get("name") for c in junit.iter("testcase") if c.find("failure") is not None]
    assert failed == ["env.version.pytorch"]
    html = (out / "report.html").read_text()
    assert 'data-kind="regressed"' in html

    # the same failure covered by a live known issue is EXPECTED: qualified again
    issues = tmp_path / "known-issues.yaml"
    issues.write_text(
        f'issues:\n  - check: env.version.pytorch\n    images: "{TORCH1}"\n    status: fail\n'
        "    reason: catalog pin under review\n    expires: 2999-01-01\n"
    )
    out = tmp_path / "q-xfail"
    proc = cli(
        "qualify",
        "--job",
        str(job),
        "--baseline",
        "rel-1",
        "--out-dir",
        str(out),
        "--catalog",
        str(cat),
        "--known-issues",
        str(issues),
        *LOOSE,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    md = (out / "report.md").read_text()
    assert "Expected failures (waived) (1)" in md and "catalog pin under review" in md

    # and diff between the failing run and the baseline, through `latest:ALIAS`, says the same
    proc = cli("diff", "rel-1", f"latest:{TORCH1}", "--format", "json", *LOOSE)
    data = json.loads(proc.stdout)
    kinds = {c["check"]: c["kind"] for c in data["changes"]}
    assert proc.returncode == 1 and kinds["env.version.pytorch"] == "regressed"


def test_qualify_unknown_baseline_is_bad_input(cli, tmp_path):
    proc = cli(
        "qualify",
        "--job",
        str(job_file(tmp_path, TORCH1)),
        "--baseline",
        "v-none",
        "--out-dir",
        str(tmp_path / "q"),
    )
    assert proc.returncode == 2 and "v-none" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "q").exists()
