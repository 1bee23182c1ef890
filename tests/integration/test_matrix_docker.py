"""The matrix from real runs of the two PyTorch test images (1.13 and 2.13)."""

import json

IMAGES = ("cpu_debian12_py3.11_pytorch_1.13", "cpu_debian12_py3.11_pytorch_2.13")


def test_since_columns_and_published_rst_from_two_torch_versions(cli):
    proc = cli(
        "run",
        "--image",
        IMAGES[0],
        "--image",
        IMAGES[1],
        "--suite",
        "features",
        "--no-gate",
        "--no-matrix",
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(
        cli("matrix", "render", "--layout", "since", "--rows", "checks", "--format", "json").stdout
    )
    rows = {r["key"]: r["cells"]["Since PyTorch"] for r in data["rows"]}
    # float8 dtypes are unsupported in 1.13 and only partial in 2.13 (products exact, add not
    # implemented on the CPU): partial support since 2.13 (⚠️), a start measured (1.13 fails)
    assert rows["features.dtype.float8_e4m3fn"]["statuses"] == ["unsupported", "partial"]
    assert rows["features.dtype.float8_e4m3fn"]["text"] == "⚠️ 2.13.0"
    assert len(rows["features.dtype.float8_e4m3fn"]["runs"]) == 2
    assert rows["features.dtype.float32"]["text"] == "≤ 1.13"  # nothing older than 1.13 was tested

    checks = json.loads(cli("matrix", "render", "--format", "json").stdout)
    float8 = {r["key"]: r for r in checks["rows"]}["features.dtype.float8_e4m3fn"]["cells"]
    assert (
        float8[IMAGES[0]]["verdict"] == "unsupported" and float8[IMAGES[1]]["verdict"] == "partial"
    )

    assert (
        cli(
            "matrix", "publish", "--version", "v1", "--layout", "since", "--include-adhoc"
        ).returncode
        == 0
    )
    rst = cli("matrix", "render", "--version", "v1", "--format", "rst").stdout
    assert ".. list-table:: Feature support by version" in rst
    assert "    * - torch.float8\\_e4m3fn\n" in rst
    html = cli(
        "matrix", "render", "--layout", "summary", "--format", "html", "--include-adhoc"
    ).stdout
    # the summary shows the backend's best evidence: partial in 2.13, not 1.13's unsupported
    assert 'data-key="torch.float8_e4m3fn"' in html and 'data-verdict="partial"' in html
