"""The seed-shaped layouts (pure): sections, descriptions, since, best-evidenced support,
critical libraries, fragments."""

from datetime import datetime

from orchestrator.matrix.document import Document, Header
from orchestrator.matrix.libraries import ImageInventory, images_for, libraries_table
from orchestrator.matrix.model import Cell, Observation, RunInfo
from orchestrator.matrix.seed import best, section_of, seed_features_table
from orchestrator.matrix.since import since_of
from orchestrator.render.markdown import document_md
from orchestrator.render.rst import document_rst


def test_since_says_no_more_than_was_measured():
    assert since_of([("1.13", "fail"), ("2.13", "pass")]).text == "2.13"  # 1.13 measured failing
    assert since_of([("1.13", "pass"), ("2.13", "pass")]).text == "≤ 1.13"  # nothing older tested
    assert "not tested before 1.13" in since_of([("1.13", "pass"), ("2.13", "pass")]).note
    assert since_of([("1.13", "partial"), ("2.13", "pass")]).text == "⚠️ ≤ 1.13"
    assert since_of([("1.13", "fail"), ("2.4", "partial"), ("2.13", "pass")]).text == "⚠️ 2.4"
    assert since_of([("2.1", "pass"), ("2.13", "fail")]).text == "—"  # broken in the newest
    assert since_of([("2.1", "pass"), ("2.2", "fail"), ("2.3", "pass")]).text == "2.3"  # came back
    assert (
        since_of([("2.4", "pass"), ("2.4", "fail"), ("2.5", "pass")]).text == "2.5"
    )  # one failing image of 2.4
    assert since_of([]).text == "not tested"


def test_best_evidenced_state_of_a_backend():
    assert best([Cell("fail", runs=("a",)), Cell("pass", runs=("b",))]) == Cell("pass", runs=("b",))
    assert best([Cell("fail"), Cell("partial", runs=("p",))]).verdict == "partial"
    assert best([Cell("fail"), Cell("crash")]).verdict in ("fail", "crash")
    assert best([Cell("skip"), Cell("missing")]).verdict == "skip"


def test_sections_follow_the_seed_page():
    assert section_of("features.dtype.float16") == "Tensor data types"
    assert section_of("features.backends.cudnn_allow_tf32") == "torch.backends.cudnn"
    assert section_of("features.backends.sdp_flash") == "torch.backends.cuda"
    assert section_of("compile.inductor.mlp") == "torch.compiler"
    assert section_of("features.amp.autocast") == "Automatic mixed precision: torch.amp"
    assert section_of("mysuite.thing") == "Other checks"
    assert section_of("selftest.pass") is None and section_of("env.version.python") is None


def obs(run, check, status, feature):
    return Observation(
        column=run,
        check=check,
        feature=feature,
        kind="feature",
        library=None,
        status=status,
        attempt=1,
        run_id=run,
    )


RUNS = [
    RunInfo("r1", "torch113", "cpu", "h", {"pytorch": "1.13"}, datetime(2026, 1, 2)),
    RunInfo("r2", "torch213", "cpu", "h", {"pytorch": "2.13"}, datetime(2026, 1, 3)),
]
OBS = [
    obs("r1", "features.dtype.uint16", "unsupported", "torch.uint16"),
    obs("r2", "features.dtype.uint16", "partial", "torch.uint16"),
    obs("r1", "compile.inductor.mlp", "pass", "torch.compiler (TorchInductor)"),
    obs("r2", "compile.inductor.mlp", "pass", "torch.compiler (TorchInductor)"),
    obs("r1", "selftest.pass", "pass", "Harness"),
    obs("r2", "env.version.python", "pass", "Python version"),
]


def test_seed_features_table_sections_descriptions_and_evidence():
    t = seed_features_table(OBS, RUNS)
    assert t.label_headers == ("Section", "Feature", "Description")
    assert t.columns == ("Supported", "Since PyTorch")
    rows = {r.key: r for r in t.rows}
    assert set(rows) == {
        "torch.uint16",
        "torch.compiler (TorchInductor)",
    }  # harness and version checks left out
    u = rows["torch.uint16"]
    assert u.labels[0] == "Tensor data types" and u.labels[2].startswith(
        "torch.uint16 tensors are created"
    )
    assert [c.text for c in u.cells] == ["⚠️", "⚠️ 2.13"] and u.cells[0].runs == ("r2",)
    c = rows["torch.compiler (TorchInductor)"]
    assert [x.text for x in c.cells] == ["✅", "≤ 1.13"] and c.cells[1].runs == ("r1", "r2")
    assert "compile.inductor.mlp" in c.cells[0].note and "compile." not in c.labels[2]
    doc = Document(Header("unpublished", "2026-01-03", ("db",)), t)
    md = document_md(doc, fragment=True)
    assert not md.startswith("# ") and "### Tensor data types" in md and "Matrix version" not in md
    rst = document_rst(doc, fragment=True)
    assert ".. rubric:: torch.compiler" in rst and "Matrix version" not in rst and "****" not in rst


def test_libraries_table_cells_empty_not_found_not_measured():
    images = images_for(
        [("rocm63", "rocm"), ("cpu1", "cpu")],
        {
            "rocm63": ("run-r", {"hipblaslt": "0.10.0", "miopen": "3.3.0", "rocm": "6.3.0"}),
            "cpu1": ("run-c", {"numpy": "1.26.4"}),
        },
        chosen=True,
    )
    images.append(ImageInventory("rocm64", "rocm", None, {}))
    t = libraries_table(images)
    rows = {r.key: dict(zip(t.columns, r.cells, strict=False)) for r in t.rows}
    assert rows["hipBLASLt"]["rocm63"].text == "0.10.0" and rows["hipBLASLt"]["rocm63"].runs == (
        "run-r",
    )
    assert rows["hipBLASLt"]["cpu1"].text == ""  # not a library of a CPU image
    assert rows["hipBLASLt"]["rocm64"].text == "not measured"
    assert rows["RCCL"]["rocm63"].text == "not found" and rows["RCCL"]["rocm63"].runs == ("run-r",)
    assert rows["NumPy"]["cpu1"].text == "1.26.4"
    assert "cuDNN" not in rows  # no image of its backend
    assert rows["hipBLASLt"]["rocm63"].note == "inventory component hipblaslt"


def test_a_description_is_never_cut_inside_its_parenthesis():
    from orchestrator.matrix.seed import _first_sentence

    text = (
        "The installed torch distribution matches the catalog entry (prefix match; a pre-release "
        "or git build of the version counts). Not proven: that it works."
    )
    assert _first_sentence(text) == (
        "The installed torch distribution matches the catalog entry (prefix match; a "
        "pre-release or git build of the version counts)."
    )
    assert _first_sentence("Runs a GEMM; checks the result. More.") == "Runs a GEMM."
