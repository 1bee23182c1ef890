"""Every suite on the three environments of this machine: Debian's PyTorch 1.13
image, the PyTorch 2.13 wheel image and the host interpreter (with
tensorflow-cpu), plus the Python 3.9 image without a framework (the probe on
the oldest Python of the catalog). The differences asserted here are measured,
not encoded."""

import json

import pytest

from tests.conftest import run_cli

SUITES = ("smoke", "kernels", "features", "compile", "profiler", "tensorflow")
TORCH = ("cpu_debian12_py3.11_pytorch_1.13", "cpu_debian12_py3.11_pytorch_2.13", "host")
PY39 = "cpu_debian11_py3.9"
IMAGES = TORCH + (PY39,)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("suites")
    job = tmp / "all-suites.yaml"
    job.write_text("name: all-suites\nimages: [" + ", ".join(IMAGES) + "]\nsuites:\n"
                   + "".join(f"  - name: {s}\n    deadline: 300\n" for s in SUITES))
    proc = run_cli("run", "--job", str(job), "--json", "--no-gate", db=tmp / "v.sqlite", timeout=3000)
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = json.loads(proc.stdout)
    by_image = {}
    for run in runs:
        by_image[run["image"]["alias"]] = {r["check"]: r for r in run["results"]}
    return by_image, runs, tmp / "v.sqlite"


def status(outcomes, image, check):
    return outcomes[0][image][check]["status"]


def test_every_check_reports_in_every_environment(outcomes):
    by_image, runs, _ = outcomes
    counts = [set(v) for v in by_image.values()]
    assert len(counts) == 4 and all(c == counts[0] for c in counts)
    assert len(counts[0]) >= 110
    for image, results in by_image.items():
        assert not [c for c, r in results.items() if r["status"] in ("error", "crash", "timeout")], image


def test_kernels_numerics_pass_with_samples(outcomes):
    for image in TORCH:
        for check in ("kernels.matmul.fp32", "kernels.conv2d.fp32", "kernels.fft.c64", "kernels.linalg.solve"):
            res = outcomes[0][image].get(check)
            if res is None:
                continue
            assert res["status"] == "pass", (image, check, res["message"])
            assert len(res["samples"]) >= 10 and res["metrics"]["rel_error"] <= res["metrics"]["tolerance"]


def test_torch_compile_absent_on_113_present_on_213(outcomes):
    assert status(outcomes, "cpu_debian12_py3.11_pytorch_1.13", "compile.aot_eager.mlp") == "unsupported"
    assert status(outcomes, "cpu_debian12_py3.11_pytorch_2.13", "compile.aot_eager.mlp") == "pass"
    assert status(outcomes, "host", "compile.inductor.mlp") == "pass"
    compiled = outcomes[0]["host"]["compile.inductor.mlp"]["metrics"]
    assert compiled["compile_s"] > 0


def test_float8_absent_on_113_present_on_213(outcomes):
    assert status(outcomes, "cpu_debian12_py3.11_pytorch_1.13", "features.dtype.float8_e4m3fn") == "unsupported"
    assert status(outcomes, "cpu_debian12_py3.11_pytorch_2.13", "features.dtype.float8_e4m3fn") == "pass"
    assert status(outcomes, "cpu_debian12_py3.11_pytorch_1.13", "features.dtype.bfloat16") == "pass"


def test_gpu_rows_skip_on_a_cpu_host(outcomes):
    for image in TORCH:
        assert status(outcomes, image, "features.cuda.graphs") == "skip"


def test_tensorflow_only_on_the_host(outcomes):
    assert status(outcomes, "host", "tf.xla.jit_compile") == "pass"
    assert status(outcomes, "host", "tf.matmul.fp32") == "pass"
    assert status(outcomes, "cpu_debian12_py3.11_pytorch_2.13", "tf.matmul.fp32") == "unsupported"


def test_one_framework_import_per_suite(outcomes):
    _, runs, _ = outcomes
    for run in runs:
        if run["image"]["alias"] == PY39:
            continue
        for suite, t in run["timings"].items():
            if suite in ("smoke", "kernels", "features"):
                assert t["workers"] == 1, (run["image"]["alias"], suite)


def test_matrix_shows_the_measured_differences(outcomes):
    *_, db = outcomes
    md = run_cli("matrix", "render", "--format", "md", db=db).stdout
    lines = md.splitlines()
    header = [c.strip() for c in next(li for li in lines if li.startswith("| Check")).strip("|").split("|")]
    row = [c.strip() for c in next(li for li in lines if li.startswith("| `features.dtype.float8_e4m3fn`"))
           .strip("|").split("|")]
    cells = dict(zip(header, row))
    assert cells["cpu_debian12_py3.11_pytorch_1.13"] == "❌ unsupported"
    assert cells["cpu_debian12_py3.11_pytorch_2.13"] == "✅" and cells["host"] == "✅"
    assert cells[PY39] == "❌ unsupported"


def test_python39_without_a_framework_reports_every_check(outcomes):
    results = outcomes[0][PY39]
    framework = [r for c, r in results.items() if c.startswith(("kernels.", "features.", "compile.", "tf."))]
    assert framework and all(r["status"] == "unsupported" for r in framework)
    assert "is not importable" in results["kernels.matmul.fp32"]["message"]
    assert results["env.version.python"]["status"] == "pass"
