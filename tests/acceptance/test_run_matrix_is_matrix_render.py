"""``valorch run``'s printed matrix and ``matrix render`` on the same store show the same
cells, decided by one function (``matrix.model.cell``): a ROCm image run ``--cpu-only`` is
``◐ cpu only`` in both, in its own ``· cpu only`` column, never ✅; and rows follow the job's
suite order (``suites: [smoke, kernels, features]``) in both, whatever order they ran in."""

import json

import pytest
import yaml
from root_helpers import ensure_fake_rocm, run_cli


def md_cells(md: str) -> tuple[list[str], dict[tuple[str, str], str]]:
    """The rows in order and (check, column) → cell text of a Markdown matrix."""
    lines = [ln for ln in md.splitlines() if ln.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    rows, cells = [], {}
    for ln in lines[2:]:
        parts = [c.strip() for c in ln.strip("|").split("|")]
        if not parts[0].startswith("`"):
            continue
        check = parts[0].strip("`")
        rows.append(check)
        for col, text in zip(head[3:], parts[3:], strict=True):
            cells[(check, col)] = text
    return rows, cells


def json_cells(doc: dict) -> dict[tuple[str, str], dict]:
    return {(r["key"], col): c for r in doc["rows"] for col, c in r["cells"].items()}


@pytest.mark.torch
def test_rows_follow_the_jobs_suite_order_in_run_and_matrix_render(tmp_path):
    job = tmp_path / "order.yaml"
    suites = [
        {"name": "smoke", "checks": ["smoke.tensor_add"]},
        {"name": "kernels", "checks": ["kernels.matmul.fp32"]},
        {"name": "features", "checks": ["features.dtype.float16"]},
    ]
    job.write_text(yaml.safe_dump({"name": "order", "images": ["host"], "suites": suites}))
    db = tmp_path / "v.sqlite"
    ran = run_cli("run", "--job", str(job), "--executor", "host", db=db)
    assert ran.returncode == 0, ran.stderr
    want = ["smoke.tensor_add", "kernels.matmul.fp32", "features.dtype.float16"]
    run_rows, run_cells = md_cells(ran.stdout)
    md = run_cli("matrix", "render", "--job", "order", "--format", "md", db=db).stdout
    doc = json.loads(
        run_cli("matrix", "render", "--job", "order", "--format", "json", db=db).stdout
    )
    render_rows, render_cells = md_cells(md)
    assert run_rows == render_rows == [r["key"] for r in doc["rows"]] == want
    assert run_cells == render_cells
    assert {k: c["text"] for k, c in json_cells(doc).items()} == run_cells


@pytest.mark.docker
def test_a_cpu_only_run_of_a_rocm_image_is_cpu_only_in_run_and_matrix_render(tmp_path):
    ensure_fake_rocm()
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "t.yaml").write_text(
        "family: t\nbackend: rocm\nlocal: true\nimages:\n"
        "  - alias: fake_rocm6.3\n    reference: valorch/test:fake-rocm\n"
    )
    db = tmp_path / "v.sqlite"
    args = ("--image", "fake_rocm6.3", "--cpu-only", "--suite", "smoke", "--catalog", str(catalog))
    ran = run_cli("run", *args, "--pull", "never", "--no-gate", db=db)
    assert ran.returncode == 0, ran.stderr
    column = "fake_rocm6.3 · cpu only"
    run_rows, run_cells = md_cells(ran.stdout)
    assert any(run_cells[(r, column)] == "◐ cpu only" for r in run_rows)
    assert not any("✅" in text for text in run_cells.values())  # never a GPU pass
    md = run_cli("matrix", "render", "--job", "adhoc", "--format", "md", db=db).stdout
    doc = json.loads(
        run_cli("matrix", "render", "--job", "adhoc", "--format", "json", db=db).stdout
    )
    render_rows, render_cells = md_cells(md)
    assert render_rows == run_rows
    by_json = json_cells(doc)
    for key, text in run_cells.items():
        assert render_cells[key] == text and by_json[key]["text"] == text, key
