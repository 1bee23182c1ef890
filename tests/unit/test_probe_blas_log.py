"""rocBLAS and hipBLASLt both run Tensile "Cijk_" kernels; their bench logs tell which one
served a GEMM (probe/blas_log.py). Parsed on the log lines the libraries' documentation
shows (tests/fixtures/tools/real/README.md)."""

from pathlib import Path

from valorch_probe import blas_log

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "tools" / "real"


def test_bench_logs_name_the_library_that_served_the_call():
    rb = (REAL / "rocblas-bench-log.txt").read_text()
    lt = (REAL / "hipblaslt-bench-log.txt").read_text()
    assert blas_log.libraries_from_logs(rb, "")["libraries"] == ["rocBLAS"]
    assert blas_log.libraries_from_logs(rb, "")["rocblas_functions"] == "gemm_ex"
    assert blas_log.libraries_from_logs("", lt) == {
        "libraries": ["hipBLASLt"],
        "hipblaslt_calls": 1,
        "rocblas_calls": 0,
        "rocblas_functions": "",
    }
    assert blas_log.libraries_from_logs(rb, lt)["libraries"] == ["hipBLASLt", "rocBLAS"]
    # a log line quoted in other text is not a call
    assert (
        blas_log.libraries_from_logs("run ./rocblas-bench -f gemm_ex later", "")["libraries"] == []
    )


def test_served_by_passes_the_logging_variables_and_reads_the_logs():
    # a child that writes where the libraries would, given the variables they read
    script = (
        "import os\nopen(os.environ['HIPBLASLT_LOG_FILE'], 'w').write(%r)\n"
        "assert os.environ['ROCBLAS_LAYER'] == '2' and os.environ['HIPBLASLT_LOG_MASK'] == '32'\n"
        % (REAL / "hipblaslt-bench-log.txt").read_text()
    )
    facts = blas_log.served_by(script)
    assert facts["returncode"] == 0 and facts["libraries"] == ["hipBLASLt"]
    # logged to stderr (no file variable honoured): still read
    script = "import sys\nsys.stderr.write(%r)\n" % (REAL / "rocblas-bench-log.txt").read_text()
    assert blas_log.served_by(script)["libraries"] == ["rocBLAS"]


def test_hip_rejecting_a_device_side_launch_is_recognised():
    """clang's err_ref_bad_target text (llvm-project clang/lib/Sema/SemaCUDA.cpp), as hipcc prints it for a
    kernel launch in device code; no real hipcc capture was found (docs/checks.md)."""
    from valorch_probe.checks.features_gpu_rows import DEVICE_LAUNCH_REJECTED

    said = (
        "valorch_dynpar.hip:5:25: error: reference to __host__ function '__hipPushCallConfiguration' "
        "in __global__ function"
    )
    assert DEVICE_LAUNCH_REJECTED.search(said)
    assert DEVICE_LAUNCH_REJECTED.search(
        "error: reference to __global__ function 'valorch_child' in __global__ function"
    )
    assert not DEVICE_LAUNCH_REJECTED.search("error: use of undeclared identifier 'valorch_child'")


VENDOR = Path(__file__).resolve().parents[1] / "fixtures" / "vendor-logs"


def test_hipblaslt_bench_lines_count_with_and_without_api_method():
    with_method = (REAL / "hipblaslt-bench-log.txt").read_text()
    without = (VENDOR / "hipblaslt-bench-no-api-method.txt").read_text()
    assert "--api_method" not in without
    for text in (with_method, without, "/opt/rocm/bin/" + without):
        assert blas_log.libraries_from_logs("", text)["libraries"] == ["hipBLASLt"], text[:60]
    assert blas_log.libraries_from_logs("", "hipblaslt-bench\n")["libraries"] == []


def test_a_log_level_in_the_environment_is_removed_for_the_child_and_reported(monkeypatch):
    """hipBLASLt ignores HIPBLASLT_LOG_MASK while HIPBLASLT_LOG_LEVEL is set (rocblaslt's
    LoggerSingleton), and no level writes the bench log: the child runs without it."""
    monkeypatch.setenv("HIPBLASLT_LOG_LEVEL", "2")
    script = (
        "import os\nassert 'HIPBLASLT_LOG_LEVEL' not in os.environ\n"
        "open(os.environ['HIPBLASLT_LOG_FILE'], 'w').write(%r)\n"
        % (REAL / "hipblaslt-bench-log.txt").read_text()
    )
    facts = blas_log.served_by(script)
    assert facts["returncode"] == 0 and facts["libraries"] == ["hipBLASLt"]
    assert facts["hipblaslt_log_level_unset"] == "2"
