"""Where kernel names cannot tell two libraries apart (cuBLAS runs cuBLASLt's kernels), the
library's own log decides which ran, and the result's evidence says which log decided. The
real probe runs against the H100 stand-in of tests/fixtures/fake_torch, whose float32 CUDA
GEMM writes the cuBLASLt trace line a real torch.matmul wrote when CUBLASLT_LOG_LEVEL is set
(tests/fixtures/vendor-logs/README.md)."""

from gpu_fakes import run_probe


def test_a_cuda_matmul_is_named_cublas_by_cublaslts_own_log(tmp_path):
    res = run_probe(tmp_path, "cuda-h100", "kernels", "kernels.matmul.fp32")
    mm = res["kernels.matmul.fp32"]
    assert mm["status"] == "pass", mm["message"]
    assert mm["library"] == "cuBLAS"
    evidence = mm["metrics"]["library_evidence"]
    assert evidence.startswith("decided by the library's own log: cuBLASLt's log traced")
    assert "cublasLtSSSMatmul" in evidence
    assert mm["metrics"]["log_cublas_gemm_calls"] == 1
    assert "log_cublaslt_matmul_calls" not in mm["metrics"]  # cuBLASLt's own API was not called


def test_without_a_log_line_no_library_is_claimed(tmp_path):
    # the stand-in's float16 GEMM writes no log line (only the float32 capture exists)
    res = run_probe(tmp_path, "cuda-h100", "kernels", "kernels.matmul.fp16")
    mm = res["kernels.matmul.fp16"]
    assert mm["status"] == "pass", mm["message"]
    assert mm["library"] is None
    assert "decided by" not in mm["metrics"]["library_evidence"]
    assert not any(k.startswith("log_cublas") for k in mm["metrics"])


def test_a_rocm_build_runs_no_cuda_library_log(tmp_path):
    res = run_probe(tmp_path, "rocm-mi300x", "kernels", "kernels.matmul.fp32")
    mm = res["kernels.matmul.fp32"]
    assert mm["status"] == "pass", mm["message"]
    assert mm["library"] is None and not any(k.startswith("log_") for k in mm["metrics"])
