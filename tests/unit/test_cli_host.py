"""The CLI as a user runs it: the real console script, the host executor."""

import json


def test_run_host_stores_and_renders(cli):
    proc = cli("run", "--image", "host")
    assert proc.returncode == 0, proc.stderr
    # the Library column names what evidence says ran on this CPU, never the row's GPU label
    line = next(
        ln
        for ln in proc.stdout.splitlines()
        if ln.startswith("| `smoke.matmul.fp32` | matmul (float32) |")
    )
    assert line.endswith("| ✅ |") and "hipBLAS" not in line and "cuBLAS" not in line
    runs = json.loads(cli("results", "list", "--json").stdout)
    assert len(runs) == 1 and runs[0]["image"] == "host" and runs[0]["state"] == "done"
    shown = json.loads(cli("results", "show", runs[0]["run"][:8], "--json").stdout)
    matmul = next(r for r in shown["results"] if r["check"] == "smoke.matmul.fp32")
    assert matmul["status"] == "pass" and len(matmul["samples"]) >= 10
    assert matmul["metrics"]["rel_error"] < 1e-4
    md = cli("matrix", "render", "--format", "md").stdout
    assert (
        "| `smoke.tensor_add` | Tensor op on device | cpu | ✅ |" in md
    )  # the library evidence names: cpu
    data = json.loads(cli("matrix", "render", "--format", "json").stdout)
    assert data["columns"] == ["host"]


def test_run_json_and_junit(cli, tmp_path):
    junit = tmp_path / "out.xml"
    proc = cli(
        "run",
        "--image",
        "host",
        "--suite",
        "selftest",
        "--deadline",
        "3",
        "--json",
        "--junit",
        str(junit),
    )
    assert proc.returncode == 1  # planted crashes fail the gate
    (run,) = json.loads(proc.stdout)
    statuses = {r["check"]: r["status"] for r in run["results"]}
    assert statuses["selftest.abort"] == "crash" and statuses["selftest.hang"] == "timeout"
    xml = junit.read_text()
    assert 'name="selftest.abort"' in xml and '<failure type="crash"' in xml
    assert (
        cli(
            "run", "--image", "host", "--suite", "selftest", "--deadline", "3", "--no-gate"
        ).returncode
        == 0
    )


def test_expected_errors_have_exit_codes_and_no_traceback(cli, tmp_path):
    cases = [
        (("run", "--image", "rocm6.3_py3.12_pytorch_2.4"), 3, "AMD GPU"),
        (
            ("run", "--image", "rocm6.3_py3.9_pytorch_1.13"),
            2,
            "rocm6.3_ubuntu20.04_py3.9_pytorch_1.13",
        ),
        (("run", "--image", "no_such_image"), 2, "unknown image"),
        (("run",), 2, "nothing to run"),
        (("run", "--image", "host", "--suite", "nope"), 2, "unknown suite"),
        (("images", "show", "nope"), 2, "unknown image"),
        (("results", "show", "deadbeef"), 2, "no run"),
        (("suites", "show", "nope"), 2, "unknown suite"),
    ]
    for args, code, text in cases:
        proc = cli(*args)
        assert proc.returncode == code, (args, proc.stderr)
        assert text in proc.stderr, (args, proc.stderr)
        assert "Traceback" not in proc.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nimages: [host]\nsuites:\n  - name: smoke\n    deadlin: 3\n")
    proc = cli("run", "--job", str(bad))
    assert proc.returncode == 2 and f"{bad}:5" in proc.stderr and "deadlin" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_images_list_json_and_show(cli):
    images = json.loads(cli("images", "list", "--json").stdout)
    assert sum(1 for i in images if i["family"] == "rocm") == 8
    shown = cli("images", "show", "rocm6.3_py3.12_pytorch_2.4").stdout
    assert "rocm/pytorch:rocm6.3_ubuntu24.04_py3.12_pytorch_release_2.4.0" in shown
    assert "sha256:98ddf20333bd01ff749b8092b1190ee369a75d3b8c71c2fac80ffdcb1a98d529" in shown


def test_repeat_makes_runs_one_after_the_other_and_diff_pools_them(cli):
    proc = cli(
        "run", "--image", "host", "--check", "smoke.matmul.fp32", "--repeat", "3", "--no-matrix"
    )
    assert proc.returncode == 0, proc.stderr
    runs = json.loads(cli("results", "list", "--json").stdout)
    assert len(runs) == 3 and len({r["run"] for r in runs}) == 3
    started = sorted(r["started"] for r in runs)
    assert started == sorted(set(started))  # one after the other, never side by side
    report = json.loads(cli("diff", "latest:host:2", runs[0]["run"], "--json").stdout)
    (pooled,) = [n for n in report["noise"] if n["check"] == "smoke.matmul.fp32"]
    assert pooled["runs"] == [2, 1]
    text = cli("diff", "latest:host:3", "latest:host:3").stdout
    assert "no regression" in text
    for bad in ("latest:host:0", "latest:host:x", "latest::3", "latest:host:101"):
        r = cli("diff", bad, "latest")
        assert r.returncode == 2 and "latest:ALIAS:N" in r.stderr and "Traceback" not in r.stderr, (
            bad
        )
    r = cli("diff", "latest:nothing:3", "latest")
    assert r.returncode == 2 and "no finished runs of nothing" in r.stderr
    assert cli("run", "--image", "host", "--repeat", "0").returncode == 2
