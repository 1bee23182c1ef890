"""MIOpen's, cuBLASLt's and cuBLAS's own logs name the library that ran a convolution or a
GEMM where kernel names cannot (probe/vendor_log.py); parsed on real captured log lines
(tests/fixtures/vendor-logs/README.md cites each), and the log decides over the kernel-name
guess in the result's library and evidence."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from valorch_probe import observe, vendor_log
from valorch_probe.checks import _own_logs, kernels
from valorch_probe.context import Context

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "vendor-logs"


def fixture(name):
    return (FIX / name).read_text()


def test_miopen_driver_commands_name_miopen_and_what_it_ran():
    facts = vendor_log.libraries_from_logs(fixture("miopen-logcmd-gfx1201.txt"))
    assert facts["libraries"] == ["MIOpen"]
    assert facts["miopen_calls"] == 4
    assert facts["miopen_commands"] == "LogCmdConvolution x3, LogCmdFindConvolution"
    assert facts["miopen_ops"] == "convfp16"
    assert "MIOPEN_ENABLE_LOGGING_CMD" in facts["decided_by"]
    fusion = vendor_log.libraries_from_logs(fixture("miopen-logcmd-fusion-gfx1030.txt"))
    assert fusion["libraries"] == ["MIOpen"]
    assert (fusion["miopen_commands"], fusion["miopen_ops"]) == ("LogCmdFusion", "CBAInfer")


def test_miopen_lines_without_a_driver_command_and_a_driver_echo_are_not_a_call():
    info = vendor_log.libraries_from_logs(fixture("miopen-info-gfx942.txt"))
    assert info["libraries"] == [] and info["miopen_lines"] == 7 and info["miopen_calls"] == 0
    # MIOpenDriver echoes its own argv (the first line of a capture): that is not MIOpen's log
    echo = fixture("miopen-logcmd-gfx1201.txt").splitlines()[0]
    assert vendor_log.libraries_from_logs(echo)["libraries"] == []


def test_cublaslt_matmul_is_cublaslt_and_its_typed_entries_are_cublas():
    lt = vendor_log.libraries_from_logs(fixture("cublaslt-trace-matmul-xla.txt"))
    assert lt["libraries"] == ["cuBLASLt"] and lt["cublaslt_matmul_calls"] == 2
    assert "cublasLtMatmul x2" in lt["decided_by"]
    # torch.matmul (cuBLAS's API) traced by cuBLASLt's log as its typed entry
    legacy = vendor_log.libraries_from_logs(fixture("cublaslt-trace-sss-torch-matmul.txt"))
    assert legacy["libraries"] == ["cuBLAS"]
    assert legacy["cublaslt_typed_calls"] == "cublasLtSSSMatmul x2"
    both = vendor_log.libraries_from_logs(
        fixture("cublaslt-trace-matmul-xla.txt") + fixture("cublaslt-trace-sss-torch-matmul.txt")
    )
    assert both["libraries"] == ["cuBLASLt", "cuBLAS"]


def test_cublaslt_setup_and_error_lines_are_not_a_matmul():
    for name in ("cublaslt-api-fp8-bias.txt", "cublaslt-error-heuristic.txt"):
        assert vendor_log.libraries_from_logs(fixture(name))["libraries"] == [], name


def test_cublas_log_names_cublas_for_a_gemm_not_for_handle_calls():
    gemm = vendor_log.libraries_from_logs(fixture("cublas-loginfo-gemmex.txt"))
    assert gemm["libraries"] == ["cuBLAS"] and gemm["cublas_functions"] == "cublasGemmEx"
    handle = vendor_log.libraries_from_logs(fixture("cublas-loginfo-handle.txt"))
    assert handle["libraries"] == []
    assert (
        handle["cublas_functions"] == "cublasCreate_v2, cublasSetStream_v2, cublasSetWorkspace_v2"
    )


def test_a_log_line_quoted_inside_other_text_is_not_a_call():
    quoted = [
        "see " + fixture("cublaslt-trace-matmul-xla.txt").splitlines()[0],
        "echo " + fixture("miopen-logcmd-fusion-gfx1030.txt").splitlines()[-1],
        "  " + fixture("cublas-loginfo-gemmex.txt").splitlines()[0],
    ]
    assert vendor_log.libraries_from_logs("\n".join(quoted))["libraries"] == []


def test_reading_is_bounded_in_lines_and_line_length():
    call = fixture("cublaslt-trace-matmul-xla.txt").splitlines()[0]
    late = "\n" * vendor_log.MAX_LINES + call
    assert vendor_log.libraries_from_logs(late)["libraries"] == []
    assert vendor_log.libraries_from_logs("x" * (vendor_log.MAX_BYTES + 10) + "\n" + call)[
        "libraries"
    ] == ([])
    long_line = call + " " * (10 * vendor_log.MAX_LINE)
    assert vendor_log.libraries_from_logs(long_line)["libraries"] == ["cuBLASLt"]


REAL_LINES = [
    line
    for name in sorted(p.name for p in FIX.glob("*.txt"))
    for line in fixture(name).splitlines()
]
_piece = st.one_of(
    st.sampled_from(REAL_LINES),
    st.sampled_from(REAL_LINES).flatmap(lambda s: st.integers(0, len(s)).map(lambda i, s=s: s[:i])),
    st.text(max_size=80),
    st.sampled_from(["[cublasLt][", "MIOpen(HIP): Command [", "I! cuBLAS (", "\r", "\x00"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_piece, max_size=12).map("\n".join))
def test_any_input_never_raises_and_never_claims_a_library_absent_from_it(text):
    facts = vendor_log.libraries_from_logs(text)
    low = text.lower()
    for lib in facts["libraries"]:
        assert lib.lower() in low
    assert set(facts["libraries"]) <= {"MIOpen", "cuBLASLt", "cuBLAS"}
    assert len(facts["decided_by"]) <= 500


def _logging_child(lt_log, stderr_log):
    """A child that writes where the libraries would, given the variables they read."""
    return (
        "import os, sys\n"
        "assert os.environ['MIOPEN_ENABLE_LOGGING_CMD'] == '1'\n"
        "assert os.environ['CUBLASLT_LOG_LEVEL'] == '2' and os.environ['CUBLAS_LOGINFO_DBG'] == '1'\n"
        "open(os.environ['CUBLASLT_LOG_FILE'], 'w').write(%r)\n"
        "sys.stderr.write(%r)\n" % (lt_log, stderr_log)
    )


def test_served_by_sets_the_logging_variables_and_reads_file_and_stderr():
    script = _logging_child(
        fixture("cublaslt-trace-matmul-xla.txt"), fixture("miopen-logcmd-gfx1201.txt")
    )
    facts = vendor_log.served_by(script)
    assert facts["returncode"] == 0 and facts["libraries"] == ["MIOpen", "cuBLASLt"]


def test_the_log_wins_over_the_kernel_name_guess_and_the_evidence_says_which_log():
    ctx = Context(device="cpu")
    ctx.begin()
    seen = observe.Seen()
    seen.libraries = ["Composable Kernel", "PyTorch (ATen native)"]
    seen.source = "torch.profiler kernel names (3 kernels)"
    ctx.seen = seen
    script = _logging_child("", fixture("miopen-logcmd-gfx1201.txt"))
    metrics = _own_logs.decide(ctx, script, _own_logs.MIOPEN_CONV)
    got = observe.summary(ctx.seen, "cuda:0 AMD Instinct MI300X gfx942")
    assert got["library"] == "MIOpen + PyTorch (ATen native)"
    evidence = got["metrics"]["library_evidence"]
    assert evidence.startswith("decided by the library's own log: MIOpen's log")
    assert "kernel names alone said Composable Kernel" in evidence
    assert metrics["log_miopen_calls"] == 4 and "libraries" not in str(sorted(metrics))


def test_cublas_and_cublaslt_replace_their_shared_kernel_label():
    ctx = Context(device="cpu")
    ctx.begin()
    seen = observe.Seen()
    seen.libraries = ["cuBLAS/cuBLASLt"]
    ctx.seen = seen
    _own_logs.decide(
        ctx,
        _logging_child(fixture("cublaslt-trace-sss-torch-matmul.txt"), ""),
        _own_logs.NVIDIA_GEMM,
    )
    assert ctx.seen.libraries == ["cuBLAS"]
    assert "cublasLtSSSMatmul x2" in ctx.seen.source


def test_no_log_line_leaves_the_kernel_name_guess():
    ctx = Context(device="cpu")
    ctx.begin()
    seen = observe.Seen()
    seen.libraries = ["cuBLAS/cuBLASLt"]
    seen.source = "torch.profiler kernel names (1 kernels)"
    ctx.seen = seen
    _own_logs.decide(ctx, "pass\n", _own_logs.NVIDIA_GEMM)
    assert ctx.seen.libraries == ["cuBLAS/cuBLASLt"]
    assert ctx.seen.source == "torch.profiler kernel names (1 kernels)"


def test_the_child_scripts_the_kernels_checks_run_are_python():
    compile(_own_logs.matmul_script(256, "float32"), "matmul", "exec")
    conv = _own_logs.conv_script((4, 8, 32, 32), (16, 8, 3, 3), "conv2d")
    assert "torch.randn(4, 8, 32, 32, device='cuda')" in conv
    compile(conv, "conv", "exec")
    compile(kernels.LINEAR_SCRIPT, "linear", "exec")


def test_a_child_that_hangs_is_killed_and_said_so():
    facts = vendor_log.served_by("import time\ntime.sleep(30)\n", timeout=1)
    assert facts["returncode"] == -1 and facts["libraries"] == []


def test_miopen_commands_are_read_behind_every_prefix_its_logger_writes():
    """LoggingPrefix() (ROCm/MIOpen src/logger.cpp) writes TheRock's "MIOpen: ", thread ids,
    host names, elapsed times and ISO times before the command (the fixture, composed from the
    source, names each)."""
    lines = fixture("miopen-logcmd-prefixes.txt").splitlines()
    assert len(lines) == 8
    for line in lines:
        facts = vendor_log.libraries_from_logs(line)
        assert facts["libraries"] == ["MIOpen"], line
        assert (facts["miopen_commands"], facts["miopen_ops"]) == ("LogCmdConvolution", "convfp16")
    therock = vendor_log.libraries_from_logs(fixture("miopen-therock-warnings.txt"))
    assert therock["miopen_lines"] == 2 and therock["libraries"] == []  # real, and no call


@given(
    st.sampled_from(["", "48213 ", "ctr-node-21 48213 "]),
    st.sampled_from(["", "(HIP)", "(OpenCL)"]),
    st.sampled_from(["", "   0.731", "1234.567"]),
    st.sampled_from(["", " (2025-12-23T07:11:13.123Z)"]),
)
def test_any_combination_of_the_prefix_parts_is_miopen(mpmt, backend, elapsed, when):
    body = fixture("miopen-logcmd-gfx1201.txt").splitlines()[-1].split(": ", 1)[1]
    line = "%sMIOpen%s%s%s: %s" % (mpmt, backend, elapsed, when, body)
    assert vendor_log.libraries_from_logs(line)["libraries"] == ["MIOpen"], line
    assert vendor_log.libraries_from_logs("echo " + line.split(" ", 2)[-1])["libraries"] in (
        [],
        ["MIOpen"],  # "echo 48213 MIOpen..." reads as host "echo", thread 48213
    )
    assert vendor_log.libraries_from_logs("echo MIOpen%s: %s" % (backend, body))["libraries"] == []
