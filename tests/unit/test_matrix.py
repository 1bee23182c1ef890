from orchestrator.matrix.model import Observation, build, verdict
from orchestrator.render.markdown import matrix_md


def obs(col, check, status, attempt=1, run="r1"):
    return Observation(
        column=col,
        check=check,
        feature=check.upper(),
        kind="kernel",
        library="hipBLAS/cuBLAS",
        status=status,
        attempt=attempt,
        run_id=run,
    )


def test_verdicts():
    assert verdict(["pass"]) == "pass"
    assert verdict(["fail", "pass"]) == "flaky"
    assert verdict(["crash", "crash"]) == "crash"
    assert verdict(["error"]) == "error"
    assert verdict([]) == "missing"


def test_matrix_cells_and_markdown():
    m = build(
        [
            obs("img1", "a", "pass"),
            obs("img2", "a", "fail"),
            obs("img2", "a", "pass", 2),
            obs("img1", "b", "unsupported"),
            obs("img2", "b", "skip"),
            obs("img1", "c", "error", run="r9"),
        ]
    )
    assert m.columns == ("img1", "img2")
    assert m.cell("a", "img2").verdict == "flaky" and m.cell("a", "img2").statuses == (
        "fail",
        "pass",
    )
    assert m.cell("c", "img2").verdict == "missing" and m.cell("c", "img1").runs == ("r9",)
    md = matrix_md(m)
    lines = md.splitlines()
    assert "| Check | Feature | Library | img1 | img2 |" in lines
    assert "| `a` | A | hipBLAS/cuBLAS | ✅ | ⁇ flaky |" in lines
    assert "| `b` | B | hipBLAS/cuBLAS | ⊘ unsupported |  |" in lines
    assert "| `c` | C | hipBLAS/cuBLAS | ⁇ error | — |" in lines


def test_library_column_is_the_evidence_never_the_label():
    def o(col, check, status, library):
        return Observation(
            column=col,
            check=check,
            feature=check,
            kind="kernel",
            library=library,
            status=status,
            attempt=1,
            run_id=col,
        )

    m = build(
        [
            o("cpu", "kernels.matmul.fp32", "pass", "MKL"),
            o("rocm", "kernels.matmul.fp32", "pass", "hipBLASLt"),
            o("cuda", "kernels.matmul.fp32", "pass", "cuBLAS"),
            o("cpu2", "kernels.matmul.fp32", "pass", "MKL"),
            o("cpu", "smoke.device", "skip", None),
        ]
    )
    rows = {r.key: r.library for r in m.rows}
    assert rows == {"kernels.matmul.fp32": "MKL · hipBLASLt · cuBLAS", "smoke.device": None}
    md = matrix_md(m)
    assert "hipBLAS/cuBLAS" not in md and "| MKL · hipBLASLt · cuBLAS |" in md
