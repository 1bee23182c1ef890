"""A team replaces its hand-kept page with valorch's output: the seed-shaped
feature table from real runs of the two CPU test images (PyTorch 1.13 and 2.13), its
sections and rows as in rocm-pytorch-compatibility.rst, every cell traceable to stored
results; the since column's wording; a fragment that docutils includes without a warning;
bad input exits 2."""

from __future__ import annotations

import io
import json
import re
import subprocess

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.docker
IMAGES = ("cpu_debian12_py3.11_pytorch_1.13", "cpu_debian12_py3.11_pytorch_2.13")
# the rows of the seed's "Tensor data types" table (rocm-pytorch-compatibility.rst), first names
SEED_DTYPES = (
    "torch.float8_e4m3fn",
    "torch.float8_e5m2",
    "torch.float16",
    "torch.bfloat16",
    "torch.float32",
    "torch.float64",
    "torch.complex32",
    "torch.complex64",
    "torch.complex128",
    "torch.uint8",
    "torch.uint16",
    "torch.uint32",
    "torch.uint64",
    "torch.int8",
    "torch.int16",
    "torch.int32",
    "torch.int64",
    "torch.bool",
    "torch.quint8",
    "torch.qint8",
    "torch.qint32",
    "torch.quint4x2",
)
# the seed's sections that the features and compile suites evidence
SEED_SECTIONS = (
    "Tensor data types",
    "torch.cuda",
    "torch.backends.cuda",
    "torch.backends.cudnn",
    "Automatic mixed precision: torch.amp",
    "Distributed library features",
    "torch.compiler",
)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    for ref in ("valorch/test:debian-torch", "valorch/test:pip-torch"):
        if subprocess.run(["docker", "image", "inspect", ref], capture_output=True).returncode != 0:
            pytest.fail(f"test image {ref} missing: run make test-images")
    path = tmp_path_factory.mktemp("seed") / "v.sqlite"
    proc = run_cli(
        "run",
        "--image",
        IMAGES[0],
        "--image",
        IMAGES[1],
        "--suite",
        "features",
        "--suite",
        "compile",
        "--no-gate",
        "--no-matrix",
        db=path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return path


def render(db, *args) -> subprocess.CompletedProcess:
    return run_cli("matrix", "render", "--job", "adhoc", *args, db=db)


def test_seed_feature_table_has_the_seeds_sections_rows_and_traceable_cells(db):
    doc = json.loads(render(db, "--layout", "seed-features", "--format", "json").stdout)
    assert doc["label_headers"] == ["Section", "Feature", "Description"]
    assert doc["columns"] == [
        "Supported",
        "Since PyTorch",
    ]  # CPU images: no ROCm or CUDA component to date
    sections = list(dict.fromkeys(r["labels"][0] for r in doc["rows"]))
    assert [s for s in sections if s in SEED_SECTIONS] == list(
        SEED_SECTIONS
    )  # all present, in the seed's order
    rows = {r["key"]: r for r in doc["rows"]}
    dtypes = [r["key"] for r in doc["rows"] if r["labels"][0] == "Tensor data types"]
    assert dtypes == list(SEED_DTYPES)  # the seed's rows, in the seed's order
    for name in (
        "Streams and events",
        "Memory management",
        "torch.compiler (TorchInductor)",
        "Autocasting",
        "Gloo",
    ):
        assert name in rows
    for r in doc["rows"]:  # a description from the catalog, never a check id
        desc = r["labels"][2]
        assert desc and not re.search(r"\b(features|compile|kernels)\.\w+\.\w+", desc), r
    assert rows["torch.float32"]["cells"]["Supported"]["text"] == "✅"
    assert (
        rows["torch.float32"]["cells"]["Since PyTorch"]["text"] == "≤ 1.13"
    )  # nothing older was tested
    # float8: unsupported in 1.13, partial in 2.13 → ⚠️, and 2.13 is a measured start (1.13 was tested)
    assert rows["torch.float8_e4m3fn"]["cells"]["Supported"]["text"] == "⚠️"
    assert rows["torch.float8_e4m3fn"]["cells"]["Since PyTorch"]["text"] == "⚠️ 2.13.0"

    stored = {r["run"]: r for r in json.loads(run_cli("results", "list", "--json", db=db).stdout)}
    shown: dict[str, dict] = {}
    traced = 0
    for r in doc["rows"]:
        for cell in r["cells"].values():
            if cell["verdict"] in ("", "skip", "missing"):
                continue
            assert cell["runs"], (r["key"], cell)
            for run in cell["runs"]:
                assert run in stored
                if run not in shown:
                    shown[run] = json.loads(run_cli("results", "show", run, "--json", db=db).stdout)
                # the results (run, check, attempt) behind the cell: this feature's, with the cell's statuses
                behind = [x for x in shown[run]["results"] if x["feature"] == r["key"]]
                assert behind, (r["key"], run)
                assert {x["status"] for x in behind} & set(cell["statuses"]), (r["key"], cell)
                traced += 1
    assert traced > 40


def test_since_never_claims_an_untested_version(db):
    doc = json.loads(render(db, "--layout", "since", "--rows", "checks", "--format", "json").stdout)
    for r in doc["rows"]:
        text = r["cells"]["Since PyTorch"]["text"]
        # with 1.13 the oldest version tested, a bare "1.13" would claim it starts there
        assert text != "1.13" and "1.13" not in text.replace("≤ 1.13", ""), (r["key"], text)
    rows = {r["key"]: r["cells"]["Since PyTorch"] for r in doc["rows"]}
    assert "not tested before 1.13" in rows["features.dtype.float32"]["note"]


def test_summary_description_and_best_evidenced_state(db):
    doc = json.loads(render(db, "--layout", "summary", "--format", "json").stdout)
    assert doc["label_headers"] == ["Features", "Description"] and doc["columns"] == ["Supported"]
    rows = {r["key"]: r for r in doc["rows"]}
    assert rows["torch.float32"]["labels"][1].startswith("torch.float32 tensors are created")
    # unsupported in 1.13 but partial in 2.13: the backend's best evidence is partial, not ❌
    assert rows["torch.float8_e4m3fn"]["cells"]["Supported"]["text"] == "⚠️"


def test_fragment_is_a_table_docutils_includes_without_warning(db, tmp_path):
    import docutils.core

    frag = render(db, "--layout", "seed-features", "--format", "rst", "--fragment")
    assert frag.returncode == 0, frag.stderr
    assert "Matrix version" not in frag.stdout and not frag.stdout.startswith("*")
    assert ".. rubric:: Tensor data types" in frag.stdout and ".. list-table::" in frag.stdout
    (tmp_path / "matrix.rst").write_text(frag.stdout)
    page = tmp_path / "page.rst"
    page.write_text(
        "PyTorch compatibility\n=====================\n\nIntro.\n\n.. include:: matrix.rst\n"
    )
    for text, where in (
        (page.read_text(), str(page)),
        (render(db, "--layout", "seed-features", "--format", "rst").stdout, "<page>"),
    ):
        err = io.StringIO()
        docutils.core.publish_string(
            text,
            source_path=where,
            writer="null",
            settings_overrides={"warning_stream": err, "report_level": 1, "halt_level": 5},
        )
        assert err.getvalue() == "", err.getvalue()
    md = render(db, "--layout", "seed-features", "--fragment").stdout
    assert not md.startswith("# ") and "Last verified" not in md and "### torch.compiler" in md
    html = render(db, "--layout", "seed-features", "--format", "html", "--fragment").stdout
    assert "<html" not in html and 'id="matrix"' in html and 'class="section"' in html


def test_bad_input_exits_2_naming_the_flag_or_the_layouts(db):
    bad = render(db, "--fragment", "--format", "json")
    assert bad.returncode == 2 and "--fragment" in bad.stderr and "Traceback" not in bad.stderr
    unknown = render(db, "--layout", "seed")
    assert unknown.returncode == 2 and "--layout" in unknown.stderr
    for layout in ("checks", "seed-features", "libraries", "summary", "tiers"):
        assert layout in unknown.stderr


def test_critical_libraries_table_from_the_inventory_of_an_image(tmp_path):
    """The seed's "Critical ROCm libraries" table, from what valorch inventory audit measured
    in the fake ROCm 6.3 image (version headers and dpkg entries, no ROCm binaries)."""
    db = tmp_path / "v.sqlite"
    audit = run_cli("inventory", "audit", "-i", "valorch/test:fake-rocm", "--json", db=db)
    assert audit.returncode == 0, audit.stderr[-2000:]
    run_id = json.loads(audit.stdout)["run"]
    doc = json.loads(
        run_cli("matrix", "render", "--layout", "libraries", "--format", "json", db=db).stdout
    )
    assert doc["label_headers"] == ["Library", "Purpose", "Used in"] and len(doc["columns"]) == 1
    col = doc["columns"][0]
    rows = {r["key"]: r for r in doc["rows"]}
    for lib, version in (
        ("hipBLASLt", "0.10.0"),
        ("MIOpen", "3.3.0"),
        ("RCCL", "2.21.5"),
        ("ROCm", "6.3.0"),
    ):
        cell = rows[lib]["cells"][col]
        assert cell["text"] == version and cell["runs"] == [run_id], (lib, cell)
        assert rows[lib]["labels"][1]  # its purpose
    assert rows["hipCUB"]["cells"][col]["text"] == "not found"  # measured, absent from this image
    assert "cuDNN" not in rows  # no CUDA image: not a row of this table
    rst = run_cli(
        "matrix", "render", "--layout", "libraries", "--format", "rst", "--fragment", db=db
    ).stdout
    assert "    * - hipBLASLt" in rst and "0.10.0" in rst


def test_tiers_read_like_the_seed_with_claims_from_results(db):
    doc = json.loads(render(db, "--layout", "tiers", "--format", "json").stdout)
    assert doc["label_headers"] == ["Platform"] and doc["columns"] == ["Tier", "Scope", "Notes"]
    (cpu,) = doc["rows"]
    assert cpu["key"] == "cpu"
    tier, scope, notes = (cpu["cells"][c] for c in doc["columns"])
    assert tier["verdict"] in (
        "first-class",
        "best-effort",
        "experimental",
        "unsupported-tier",
        "too few runs",
    )
    assert (
        scope["verdict"] == "" and notes["verdict"] == ""
    )  # the tier is the only badge of the row
    assert re.search(r"features \(\d+/\d+ pass\)", scope["text"]) and "compile (" in scope["text"]
    assert re.match(r"pass rate \d+\.\d% \(\d+ of \d+ checks with a verdict\)", notes["text"])
    assert tier["runs"] and len(tier["runs"]) == 2
