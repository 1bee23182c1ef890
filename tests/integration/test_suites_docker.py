"""Every suite on the three environments of this machine: Debian's PyTorch 1.13
image, the PyTorch 2.13 wheel image and the host interpreter (with
tensorflow-cpu). The differences asserted here are measured, not encoded."""

import json

import pytest

from tests.conftest import run_cli

SUITES = ("smoke", "kernels", "features", "compile", "profiler", "tensorflow")
IMAGES = ("cpu_debian12_py3.11_pytorch_1.13", "cpu_debian12_py3.11_pytorch_2.13", "host")


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
    assert counts[0] == counts[1] == counts[2]
    assert len(counts[0]) >= 110
    for image, results in by_image.items():
        assert not [c for c, r in results.items() if r["status"] in ("error", "crash", "timeout")], image


def test_kernels_numerics_pass_with_samples(outcomes):
    for image in IMAGES:
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
    for image in IMAGES:
        assert status(outcomes, image, "features.cuda.graphs") == "skip"


def test_tensorflow_only_on_the_host(outcomes):
    assert status(outcomes, "host", "tf.xla.jit_compile") == "pass"
    assert status(outcomes, "host", "tf.matmul.fp32") == "pass"
    assert status(outcomes, "cpu_debian12_py3.11_pytorch_2.13", "tf.matmul.fp32") == "unsupported"


def test_one_framework_import_per_suite(outcomes):
    _, runs, _ = outcomes
    for run in runs:
        for suite, t in run["timings"].items():
            if suite in ("smoke", "kernels", "features"):
                assert t["workers"] == 1, (run["image"]["alias"], suite)


def test_matrix_shows_the_measured_differences(outcomes):
    *_, db = outcomes
    md = run_cli("matrix", "render", "--format", "md", db=db).stdout
    row = [line for line in md.splitlines() if line.startswith("| `features.dtype.float8_e4m3fn`")][0]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3:] == ["❌ unsupported", "✅", "✅"]
