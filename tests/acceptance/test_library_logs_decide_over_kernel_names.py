"""Where kernel names cannot tell libraries apart (cuBLAS runs cuBLASLt's kernels; MIOpen's
convolutions run CK or Tensile kernels), the library's own log decides which ran, and the
result's evidence says which log decided. The real probe runs against the H100 and MI300X
stand-ins of tests/fixtures/fake_torch: a float32 CUDA GEMM writes the cuBLASLt trace line a
real torch.matmul wrote when CUBLASLT_LOG_LEVEL is set, a convolution on the ROCm build the
MIOpen driver-command line MIOpen wrote when MIOPEN_ENABLE_LOGGING_CMD=1
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


def test_a_rocm_convolution_is_named_miopen_by_its_own_log(tmp_path):
    res = run_probe(
        tmp_path, "rocm-mi300x", "kernels", "kernels.conv2d.fp32", "kernels.conv3d.fp32"
    )
    for check in ("kernels.conv2d.fp32", "kernels.conv3d.fp32"):
        conv = res[check]
        assert conv["status"] == "pass", conv["message"]
        assert conv["library"] == "MIOpen"
        assert conv["metrics"]["library_evidence"].startswith(
            "decided by the library's own log: MIOpen's log (MIOPEN_ENABLE_LOGGING_CMD) logged "
            "LogCmdConvolution"
        )
        assert conv["metrics"]["log_miopen_calls"] == 1


def test_a_cuda_convolution_never_claims_miopen(tmp_path):
    res = run_probe(tmp_path, "cuda-h100", "kernels", "kernels.conv2d.fp32")
    conv = res["kernels.conv2d.fp32"]
    assert conv["status"] == "pass", conv["message"]
    assert conv["library"] is None and not any(k.startswith("log_") for k in conv["metrics"])
