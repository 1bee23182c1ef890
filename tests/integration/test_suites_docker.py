"""Every suite on the three environments of this machine: Debian's PyTorch 1.13
image, the PyTorch 2.13 wheel image and the host interpreter (with
tensorflow-cpu), plus the Python 3.9 image without a framework (the probe on
the oldest Python of the catalog). The differences asserted here are measured,
not encoded."""

import json
import subprocess

import pytest

from tests.conftest import run_cli
from tests.unit.test_probe_evidence import GPU_LIBRARIES
from valorch_probe.loader import catalog

SUITES = ("smoke", "kernels", "features", "compile", "profiler", "tensorflow")
TORCH = ("cpu_debian12_py3.11_pytorch_1.13", "cpu_debian12_py3.11_pytorch_2.13", "host")
PY39 = "cpu_debian11_py3.9"
IMAGES = (*TORCH, PY39)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("suites")
    job = tmp / "all-suites.yaml"
    job.write_text(
        "name: all-suites\nimages: ["
        + ", ".join(IMAGES)
        + "]\nsuites:\n"
        + "".join(f"  - name: {s}\n    deadline: 300\n" for s in SUITES)
    )
    proc = run_cli(
        "run", "--job", str(job), "--json", "--no-gate", db=tmp / "v.sqlite", timeout=3000
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = json.loads(proc.stdout)
    by_image = {}
    for run in runs:
        by_image[run["image"]["alias"]] = {r["check"]: r for r in run["results"]}
    return by_image, runs, tmp / "v.sqlite"


def status(outcomes, image, check):
    return outcomes[0][image][check]["status"]


def test_every_check_reports_in_every_environment(outcomes):
    by_image, _runs, _ = outcomes
    counts = [set(v) for v in by_image.values()]
    assert len(counts) == 4 and all(c == counts[0] for c in counts)
    assert len(counts[0]) >= 110
    for image, results in by_image.items():
        assert not [
            c for c, r in results.items() if r["status"] in ("error", "crash", "timeout")
        ], image


def test_kernels_numerics_pass_with_samples(outcomes):
    for image in TORCH:
        for check in (
            "kernels.matmul.fp32",
            "kernels.conv2d.fp32",
            "kernels.fft.c64",
            "kernels.linalg.solve",
        ):
            res = outcomes[0][image].get(check)
            if res is None:
                continue
            assert res["status"] == "pass", (image, check, res["message"])
            assert (
                len(res["samples"]) >= 10
                and res["metrics"]["rel_error"] <= res["metrics"]["tolerance"]
            )


def test_torch_compile_absent_on_113_present_on_213(outcomes):
    assert (
        status(outcomes, "cpu_debian12_py3.11_pytorch_1.13", "compile.aot_eager.mlp")
        == "unsupported"
    )
    assert status(outcomes, "cpu_debian12_py3.11_pytorch_2.13", "compile.aot_eager.mlp") == "pass"
    assert status(outcomes, "host", "compile.inductor.mlp") == "pass"
    compiled = outcomes[0]["host"]["compile.inductor.mlp"]["metrics"]
    assert compiled["compile_s"] > 0


def test_float8_absent_on_113_partial_on_213(outcomes):
    """float8 exists in 2.13 but eager add is not implemented on the CPU: partial, naming add; 1.13 has no float8."""
    assert (
        status(outcomes, "cpu_debian12_py3.11_pytorch_1.13", "features.dtype.float8_e4m3fn")
        == "unsupported"
    )
    r = outcomes[0]["cpu_debian12_py3.11_pytorch_2.13"]["features.dtype.float8_e4m3fn"]
    assert (
        r["status"] == "partial"
        and r["message"].startswith("partial support: ")
        and "add" in r["message"]
    )
    assert status(outcomes, "cpu_debian12_py3.11_pytorch_1.13", "features.dtype.bfloat16") == "pass"


def test_partial_is_partial(outcomes):
    """Dtypes that work only in part are partial, never pass; the message names what failed."""
    for image in ("cpu_debian12_py3.11_pytorch_2.13", "host"):
        for name in ("uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2"):
            r = outcomes[0][image]["features.dtype." + name]
            assert r["status"] == "partial", (image, name, r["message"])
            assert "not implemented: add" in r["message"] and "multiply" in r["metrics"]["worked"]
    for name in ("uint16", "uint32", "uint64"):  # 1.13 has no such dtype at all
        assert (
            status(outcomes, "cpu_debian12_py3.11_pytorch_1.13", "features.dtype." + name)
            == "unsupported"
        )


def test_cpu_results_say_cpu_and_never_carry_a_gpu_library(outcomes):
    for image in TORCH:
        for cid, r in outcomes[0][image].items():
            if r["status"] not in ("pass", "partial", "fail"):
                continue
            metrics = r["metrics"]
            assert metrics.get("device") == "cpu", (image, cid, metrics.get("device"))
            lib = metrics.get("library") or ""
            assert not any(g in lib for g in GPU_LIBRARIES), (image, cid, lib)
    # the library named is evidence: MKL's verbose line in the wheel, oneDNN's in Debian's build
    wheel = outcomes[0]["cpu_debian12_py3.11_pytorch_2.13"]
    assert wheel["kernels.matmul.fp32"]["metrics"]["library"] == "MKL"
    assert "SGEMM" in wheel["kernels.matmul.fp32"]["metrics"]["library_evidence"]
    debian = outcomes[0]["cpu_debian12_py3.11_pytorch_1.13"]
    assert debian["kernels.matmul.fp32"]["metrics"]["library"] == "reference BLAS (netlib)"
    assert debian["kernels.conv2d.fp32"]["metrics"]["library"] == "oneDNN"
    assert debian["kernels.sort.fp32"]["metrics"]["library"] == "cpu"


def test_collectives_use_two_processes(outcomes):
    for image in TORCH:
        for cid in (
            "kernels.all_reduce.gloo",
            "features.distributed.gloo",
            "features.distributed.tensorpipe",
        ):
            r = outcomes[0][image][cid]
            assert r["status"] == "pass", (image, cid, r["message"])
            assert r["metrics"]["world_size"] == 2 and r["metrics"]["processes"] == 2, (image, cid)
        # NCCL/RCCL needs one rank per GPU: none here
        assert status(outcomes, image, "kernels.all_reduce.nccl") == "n/a"  # a GPU row, CPU image
        assert status(outcomes, image, "features.cuda.collectives") == "n/a"


def test_gpu_only_rows_skip_never_pass_on_the_cpu(outcomes):
    gpu_rows = [c["id"] for c in catalog()["checks"] if "gpu" in c["needs"]]
    assert len(gpu_rows) >= 40
    for image in TORCH:
        for cid in gpu_rows:
            r = outcomes[0][image][cid]
            assert r["status"] in ("skip", "unsupported", "n/a"), (
                image,
                cid,
                r["status"],
                r["message"],
            )
        for cid in (
            "features.amp.autocast",
            "features.amp.grad_scaler",
            "features.cuda.streams_events",
        ):
            r = outcomes[0][image][cid]
            assert r["status"] in ("skip", "n/a") and "needs a GPU" in r["message"], (
                image,
                cid,
                r["message"],
            )


def test_smoke_reports_what_it_found(outcomes):
    for image in TORCH[:2]:
        r = outcomes[0][image]["smoke.device"]
        assert r["status"] == "skip" and r["message"].startswith("device: cpu"), r["message"]
        backend = outcomes[0][image]["env.build.backend"]
        assert backend["status"] == "pass" and "no HIP or CUDA version" in backend["message"]
    pre = outcomes[0]["cpu_debian12_py3.11_pytorch_1.13"]["env.version.pytorch"]
    assert (
        pre["status"] == "pass"
        and "pre-release 1.13.0a0" in pre["message"]
        and "only by prefix" in pre["message"]
    )
    release = outcomes[0]["cpu_debian12_py3.11_pytorch_2.13"]["env.version.pytorch"]
    assert release["status"] == "pass" and "warning" not in release["message"]


def test_sdpa_records_which_backend_ran(outcomes):
    r = outcomes[0]["cpu_debian12_py3.11_pytorch_2.13"]["kernels.sdpa.fp32"]
    assert r["status"] == "pass"
    assert r["metrics"]["sdpa_flash"].startswith("flash ran") and r["metrics"][
        "sdpa_math"
    ].startswith("math ran")
    assert (
        "unavailable" in r["metrics"]["sdpa_mem_efficient"]
    )  # no CPU kernel: recorded, not claimed


BROKEN = "cpu_debian12_py3.11_pytorch_1.13_broken_torchvision"


def test_installed_but_broken_torchvision_is_fail_not_unsupported(tmp_path):
    if (
        subprocess.run(
            ["docker", "image", "inspect", "valorch/test:broken-torchvision"], capture_output=True
        ).returncode
        != 0
    ):
        pytest.fail("test image valorch/test:broken-torchvision missing: run make test-images")
    job = tmp_path / "broken.yaml"
    job.write_text(
        "name: broken-torchvision\nimages: [%s, cpu_debian12_py3.11_pytorch_1.13]\nsuites:\n"
        "  - {name: features, checks: ['features.torchvision.*', 'features.torchaudio.*']}\n"
        "  - {name: smoke, checks: [env.version.torchvision]}\n" % BROKEN
    )
    proc = run_cli(
        "run", "--job", str(job), "--json", "--no-gate", db=tmp_path / "v.sqlite", timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    by_image = {
        run["image"]["alias"]: {r["check"]: r for r in run["results"]}
        for run in json.loads(proc.stdout)
    }
    broken, clean = by_image[BROKEN], by_image["cpu_debian12_py3.11_pytorch_1.13"]
    for cid in (
        "features.torchvision.transforms_functional",
        "features.torchvision.ops",
        "features.torchvision.models",
        "features.torchvision.io",
    ):
        r = broken[cid]
        assert r["status"] == "fail", (cid, r["status"], r["message"])
        assert (
            "installed but fails to import" in r["message"] and "undefined symbol" in r["message"]
        ), r["message"]
        assert clean[cid]["status"] == "n/a" or (  # a GPU row on this CPU image
            clean[cid]["status"] == "unsupported" and "not installed" in clean[cid]["message"]
        )
    # torchaudio is genuinely absent in both: unsupported
    assert broken["features.torchaudio.spectrogram"]["status"] in ("unsupported", "n/a")
    # the distribution is there, at the catalogued version: the version row passes, the feature rows fail
    assert broken["env.version.torchvision"]["status"] == "pass"


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
    header = [
        c.strip()
        for c in next(li for li in lines if li.startswith("| Check")).strip("|").split("|")
    ]
    row = [
        c.strip()
        for c in next(li for li in lines if li.startswith("| `features.dtype.float8_e4m3fn`"))
        .strip("|")
        .split("|")
    ]
    cells = dict(zip(header, row, strict=False))
    assert cells["cpu_debian12_py3.11_pytorch_1.13"] == "⊘ unsupported"
    assert cells["cpu_debian12_py3.11_pytorch_2.13"] == "⚠️ partial" and cells["host"] == "⚠️ partial"
    assert cells[PY39] == "⊘ unsupported"


def test_python39_without_a_framework_reports_every_check(outcomes):
    results = outcomes[0][PY39]
    framework = [
        r
        for c, r in results.items()
        if c.startswith(("kernels.", "features.", "compile.", "tf."))
        and not c.startswith("features.rocm.")
    ]
    assert framework and all(r["status"] in ("unsupported", "n/a") for r in framework)
    # the ROCm library rows need no framework: in a CPU image they do not apply (n/a, not ❌)
    rocm = [r for c, r in results.items() if c.startswith("features.rocm.")]
    assert len(rocm) == 10 and all(
        r["status"] == "n/a" and "a ROCm row on a CPU image" in r["message"] for r in rocm
    )
    assert "is not importable" in results["kernels.matmul.fp32"]["message"]
    assert results["env.version.python"]["status"] == "pass"
