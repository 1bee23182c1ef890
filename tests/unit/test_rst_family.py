"""Every framework page of ROCm's compatibility docs family, at every distinct Docker image
table of its history (tests/fixtures/rocm-docs, README there), read by the importer: the
number of images, each image's backend and ROCm version, the framework's and Python's
versions as bare versions, and the cells the import could not read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.catalog import releases, rst_cells, rst_import
from orchestrator.catalog.rst_table import HEADERS

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "rocm-docs"
PAGES = FIX / "pages"
BARE = re.compile(
    r"(?:\d+(?:\.\d+)*(?:-\d+(?:\.\d+)*)?(?:\.?(?:a|b|rc|post|dev)\d+)?(?:\+[\w.]+)?|b\d+|master)"
)

# page, images, ROCm versions, framework column, its versions, Python versions, unread cells
EXPECTED = [
    ("dgl-compatibility.3f03d959.rst", 4, ["6.4"], "dgl", ["2.4.0"], ["3.10.16", "3.12.9"], []),
    ("flashinfer-compatibility.0ba8fdc9.rst", 1, ["6.4.1"], "flashinfer", ["0.2.5"], ["3.12"], []),
    (
        "jax-compatibility.7449cfa35d.rst",
        12,
        ["6.2.3", "6.2.4"],
        "jax",
        ["0.4.31", "0.4.33", "0.4.34", "0.4.35"],
        ["3.10.15", "3.11.10", "3.12.6", "3.12.7"],
        [],
    ),
    (
        "jax-compatibility.793959c96e.rst",
        5,
        ["6.2.4", "6.3"],
        "jax",
        ["0.4.31", "0.4.35"],
        ["3.10.14", "3.10.15", "3.11.10", "3.12.7"],
        [],
    ),
    (
        "jax-compatibility.9176c9d5a3.rst",
        5,
        ["6.2.4", "6.3.1"],
        "jax",
        ["0.4.31", "0.4.35"],
        ["3.10.14", "3.10.15", "3.11.10", "3.12.7"],
        [],
    ),
    (
        "jax-compatibility.cb82ffbf31.rst",
        5,
        ["6.3.1"],
        "jax",
        ["0.4.31", "0.5.0"],
        ["3.10.14", "3.10.16", "3.11.10", "3.12.7", "3.12.8"],
        [],
    ),
    (
        "jax-compatibility.daa2850b62.rst",
        5,
        ["6.2.4", "6.3"],
        "jax",
        ["0.4.31", "0.4.35"],
        ["3.10.14", "3.10.15", "3.11.10", "3.12.7"],
        [],
    ),
    (
        "llama-cpp-compatibility.0ba8fdc9.rst",
        27,
        ["6.4.0", "6.4.1", "6.4.2", "6.4.3", "7.0.0"],
        "llama_cpp",
        ["b5997", "b6356"],
        ["-"],
        [],
    ),
    (
        "megablocks-compatibility.7b86e295.rst",
        1,
        ["6.3.0"],
        "megablocks",
        ["0.7.0"],
        ["3.12.9"],
        [],
    ),
    (
        "pytorch-compatibility.9572cad666.rst",
        8,
        ["6.3"],
        "pytorch",
        ["1.13.1", "2.2.1", "2.3.0", "2.4.0"],
        ["3.10", "3.12", "3.9"],
        [],
    ),
    (
        "pytorch-compatibility.ab38960bb4.rst",
        8,
        ["6.3.3"],
        "pytorch",
        ["1.13.1", "2.2.1", "2.3.0", "2.4.0"],
        ["3.10", "3.10.16", "3.12.9", "3.9.21"],
        [],
    ),
    (
        "pytorch-compatibility.cf92ac846d.rst",
        8,
        ["6.3"],
        "pytorch",
        ["1.13.1", "2.2.1", "2.3.0", "2.4.0"],
        ["3.10", "3.12", "3.9.18", "3.9.21"],
        [],
    ),
    (
        "pytorch-compatibility.d8e56ef41b.rst",
        8,
        ["6.3"],
        "pytorch",
        ["1.13.1", "2.2.1", "2.3.0", "2.4.0"],
        ["3.10", "3.12", "3.9"],
        [],
    ),
    (
        "ray-compatibility.a98d6a57.rst",
        2,
        ["6.4.1", "7.0.0"],
        "ray",
        ["2.48.0.post0", "2.51.1"],
        ["3.12.10", "3.12.12"],
        [],
    ),
    (
        "stanford-megatron-lm-compatibility.9b2469fc.rst",
        1,
        ["6.3.0"],
        "pytorch",
        ["2.4.0"],
        ["3.12.9"],
        [],
    ),
    ("taichi-compatibility.61f970a2.rst", 1, ["6.3.2"], "taichi", ["1.8.0b1"], ["3.10.12"], []),
    (
        "tensorflow-compatibility.355a70b67b.rst",
        5,
        ["6.3.1"],
        "tensorflow",
        ["2.15.1", "2.16.2", "2.17.0"],
        ["3.10", "3.12"],
        [],
    ),
    (
        "tensorflow-compatibility.44455b7eae.rst",
        5,
        ["6.3.3"],
        "tensorflow",
        ["2.15.1", "2.16.2", "2.17.0"],
        ["3.10.16", "3.12.4"],
        [],
    ),
    (
        "tensorflow-compatibility.46844436a4.rst",
        5,
        ["6.3.1"],
        "tensorflow",
        ["2.15.1", "2.16.2", "2.17.0"],
        ["3.10", "3.12"],
        [],
    ),
    (
        "tensorflow-compatibility.478a9e45b8.rst",
        5,
        ["6.3.1"],
        "tensorflow",
        ["2.15.1", "2.16.2", "2.17.0"],
        ["3.10", "3.12"],
        [],
    ),
    (
        "tensorflow-compatibility.54174e5df9.rst",
        3,
        ["6.3"],
        "tensorflow",
        ["0.37.1", "2.15.0"],
        ["3.10"],
        [],
    ),
    (
        "tensorflow-compatibility.85eae91950.rst",
        5,
        ["6.3.1"],
        "tensorflow",
        ["2.15.1", "2.16.0", "2.16.2", "2.17.0"],
        ["3.10", "3.12"],
        [],
    ),
    ("tensorflow-compatibility.b94c87306f.rst", 2, ["6.3"], "tensorflow", ["2.15.1"], ["3.10"], []),
    (
        "tensorflow-compatibility.bc07746f3d.rst",
        5,
        ["6.3.3"],
        "tensorflow",
        ["2.15.1", "2.16.2", "2.17.0"],
        ["3.10.16", "3.12.4"],
        [],
    ),
    ("tensorflow-compatibility.f6f2c1a0ea.rst", 2, ["6.3"], "tensorflow", ["2.15.1"], ["3.10"], []),
    (
        "tensorflow-compatibility.fbca8f463b.rst",
        4,
        ["6.3.1"],
        "tensorflow",
        ["2.15.1", "2.16.2", "2.17.0"],
        ["3.10", "3.12"],
        [],
    ),
    ("verl-compatibility.0ac97e1c.rst", 1, ["6.2"], "verl", ["0.3.0post0"], ["3.9.19"], []),
]

DIGEST_TYPO = "a digest that is not 64 hex digits: the image is kept by its tag, without one"
DGL = ("dgl", ["2.4.0"], ["3.10.16", "3.12.9"], [])
ROCM_64_70 = ["6.4.0", "6.4.1", "6.4.2", "6.4.3", "7.0.0"]
VERL_2 = (2, ["6.2.0", "7.0.0"], "verl", ["0.3.0.post0", "0.6.0"], ["3.12.11", "3.9.19"], [])

# the other versions of the later pages found in the stores (README there: repository,
# commit or stored id, and what distinguishes each), read by hand from each page
HISTORY = [
    ("dgl-compatibility.87c6e320.rst", 4, ["6.4"], *DGL),
    ("dgl-compatibility.6da80aed.rst", 4, ["6.4.0"], *DGL),  # ROCm cells "`6.4.0 <url>`__."
    ("dgl-compatibility.fad6924d.rst", 8, ["6.4.0", "6.4.3", "7.0.0"], *DGL),
    ("dgl-compatibility.fff7efbd.rst", 8, ["6.4.0", "6.4.3", "7.0.0"], *DGL),
    ("flashinfer-compatibility.a98d6a57.rst", 1, ["6.4.1"], "flashinfer", ["0.2.5"], ["3.12"], []),
    ("flashinfer-compatibility.4e392bdc.rst", 1, ["6.4.1"], "flashinfer", ["0.2.5"], ["3.12"], []),
    ("flashinfer-compatibility.700186c7.rst", 1, ["6.4.1"], "flashinfer", ["0.2.5"], ["3.12"], []),
    (
        "flashinfer-compatibility.d3a4db97.rst",
        2,
        ["6.4.1", "7.1.1"],
        "flashinfer",
        ["0.2.5"],
        ["3.12"],
        [],
    ),
    ("llama-cpp-compatibility.5f516799.rst", 3, ["6.4.0"], "llama_cpp", ["b5997"], ["-"], []),
    ("llama-cpp-compatibility.f1d67d6d.rst", 3, ["6.4.0"], "llama_cpp", ["b5997"], ["-"], []),
    (
        "llama-cpp-compatibility.eb69bf63.rst",
        27,
        ROCM_64_70,
        "llama_cpp",
        ["b5997", "b6356"],
        ["-"],
        [],
    ),
    (
        "llama-cpp-compatibility.9c958afd.rst",
        27,
        ROCM_64_70,
        "llama_cpp",
        ["b5997", "b6356", "b6652"],
        ["-"],
        [(110, "Full Docker", DIGEST_TYPO)],  # its first link's digest has 65 characters
    ),
    (
        "megablocks-compatibility.82221c4e.rst",
        1,
        ["6.3.0"],
        "megablocks",
        ["0.7.0"],
        ["3.12.9"],
        [],
    ),
    (
        "megablocks-compatibility.d30e8c5f.rst",
        1,
        ["6.3.0"],
        "megablocks",
        ["0.7.0"],
        ["3.12.9"],
        [],
    ),
    (
        "megablocks-compatibility.0cccaf62.rst",
        1,
        ["6.3.0"],
        "megablocks",
        ["0.7.0"],
        ["3.12.9"],
        [],
    ),
    (
        "megablocks-compatibility.5716ecec.rst",
        1,
        ["6.3.0"],
        "megablocks",
        ["0.7.0"],
        ["3.12.9"],
        [],
    ),
    ("ray-compatibility.428d750b.rst", 1, ["6.4.1"], "ray", ["2.48.0.post0"], ["3.12.10"], []),
    (
        "stanford-megatron-lm-compatibility.a5c7baf1.rst",
        1,
        ["6.3.0"],
        "pytorch",
        ["2.4.0"],
        ["3.12.9"],
        [],
    ),
    (
        "stanford-megatron-lm-compatibility.4e392bdc.rst",
        1,
        ["6.3.0"],
        "pytorch",
        ["2.4.0"],
        ["3.12.9"],
        [],
    ),
    (
        "stanford-megatron-lm-compatibility.f3e2badb.rst",
        1,
        ["6.3.0"],
        "pytorch",
        ["2.4.0"],
        ["3.12.9"],
        [],
    ),
    ("taichi-compatibility.4e392bdc.rst", 1, ["6.3.2"], "taichi", ["1.8.0b1"], ["3.10.12"], []),
    ("taichi-compatibility.3da4a377.rst", 1, ["6.3.2"], "taichi", ["1.8.0b1"], ["3.10.12"], []),
    ("verl-compatibility.1b8c7f25.rst", 1, ["6.2.0"], "verl", ["0.3.0post0"], ["3.9.19"], []),
    ("verl-compatibility.d4936a0e.rst", 1, ["6.2.0"], "verl", ["0.3.0post0"], ["3.9.19"], []),
    ("verl-compatibility.bb619f34.rst", *VERL_2),
    ("verl-compatibility.ef8ffffa.rst", *VERL_2),
    ("verl-compatibility.5f3bf29e.rst", *VERL_2),
]

# draft versions of the history whose Docker table does not parse: exit 2 naming the line
BROKEN = [
    (
        "jax-compatibility.89919fa2e7.rst",
        ":95: row 1 of 'PyTorch docker image components' has 1 cells",
    ),
    ("jax-compatibility.df0dca6765.rst", ":22: no Docker image components table"),
    ("tensorflow-compatibility.3342d0fe72.rst", ":1: no list-table on the page"),
    # ROCm 7.x: the tags moved to the install guide, which the error names
    (
        "pytorch-compatibility.089d7513.docker-section.rst",
        ":1: no list-table on the page: this page lists no image tags",
    ),
]
# the install guide's section (ROCm 7.x), and the 7.x TensorFlow and JAX pages that point to
# theirs, read by their own tests
ELSEWHERE = {
    "pytorch-install.66497698009.docker-section.rst",
    "tensorflow-compatibility.11565205999.docker-section.rst",
    "jax-compatibility.11860827781.docker-section.rst",
}


@pytest.mark.parametrize("framework", ["tensorflow", "jax"])
def test_rocm7_pages_say_which_install_page_holds_their_tags(framework):
    (name,) = [p for p in ELSEWHERE if p.startswith(framework)]
    with pytest.raises(rst_import.RstImportError) as said:
        read(name)
    assert f"'{framework}-docker-support'" in str(said.value)
    assert f"docs/install/3rd-party/{framework}-install.rst" in str(said.value)


def read(name: str) -> rst_import.PageRead:
    return rst_import.read_page((PAGES / name).read_text(encoding="utf-8"), name)


def test_every_fixture_page_is_listed():
    listed = {e[0] for e in EXPECTED + HISTORY} | {b[0] for b in BROKEN} | ELSEWHERE
    assert listed == {p.name for p in PAGES.glob("*.rst")}


@pytest.mark.parametrize(
    ("name", "count", "rocm", "framework", "versions", "python", "unread"), EXPECTED + HISTORY
)
def test_page_version_imports_as_published(name, count, rocm, framework, versions, python, unread):
    page = read(name)
    assert len(page.entries) == count
    assert {i.backend for i in page.images} == {"rocm"}  # every image says ROCm
    assert sorted({i.rocm for i in page.images}) == rocm
    for entry, image in zip(page.entries, page.images, strict=True):
        assert entry["components"]["rocm"] == image.rocm  # the ROCm version is a component
        for key, value in entry["components"].items():
            assert BARE.fullmatch(value), (name, key, value)
    assert sorted({e["components"].get(framework, "-") for e in page.entries}) == versions
    assert sorted({e["components"].get("python", "-") for e in page.entries}) == python
    assert [(u.line, u.column, u.reason) for u in page.unread] == unread


@pytest.mark.parametrize(("name", "where"), BROKEN)
def test_draft_without_a_readable_table_names_file_and_line(name, where):
    with pytest.raises(rst_import.RstImportError, match=re.escape(name + where)):
        read(name)


def test_words_around_versions_are_not_components():
    tf = read("tensorflow-compatibility.bc07746f3d.rst")
    first = tf.entries[0]
    assert first["components"]["tensorflow"] == "2.17.0"  # "tensorflow-rocm 2.17.0"
    assert first["components"]["python"] == "3.12.4"  # "Python 3.12.4"
    assert first["components"]["tensorboard"] == "2.17.1"  # "TensorBoard 2.17.1"
    assert "dev" not in first["components"] and first["labels"] == {"dev": "dev"}
    megatron = read("stanford-megatron-lm-compatibility.9b2469fc.rst")
    assert megatron.entries[0]["labels"] == {"stanford_megatron_lm": "85f95ae"}  # a commit
    ray = read("ray-compatibility.a98d6a57.rst")
    assert ray.entries[0]["components"]["pytorch"] == "2.9.0a0+git1c57644"
    assert ray.entries[1]["labels"] == {"gpu": "MI300X, MI210"}


def test_several_image_columns_are_one_image_each():
    page = read("llama-cpp-compatibility.0ba8fdc9.rst")
    assert [e["labels"]["variant"] for e in page.entries[:3]] == [
        "Full Docker",
        "Server Docker",
        "Light Docker",
    ]
    assert (
        page.entries[0]["reference"] == "rocm/llama.cpp:llama.cpp-b6356_rocm7.0.0_ubuntu24.04_full"
    )
    assert page.entries[-1]["components"] == {
        "rocm": "6.4.0",
        "llama_cpp": "b5997",
        "ubuntu": "24.04",
    }


def test_rocm_version_comes_from_table_then_tag_then_page():
    flash = read("flashinfer-compatibility.0ba8fdc9.rst")  # tag rocm6.4, ROCm column 6.4.1
    assert flash.images[0].rocm == "6.4.1"
    jax = read("jax-compatibility.9176c9d5a3.rst")  # community table: the tag's rocm6.2.4
    assert [i.rocm for i in jax.images] == ["6.3.1", "6.3.1", "6.2.4", "6.2.4", "6.2.4"]
    assert jax.images[2].alias == "rocm6.2.4-jax0.4.35-py3.12.7"


# a page in the family's shape whose components are written as roles and substitutions
ROLES = """
.. version-set:: rocm_version 6.3.0
.. |docker-icon| raw:: html

   <i class="fab fa-docker"></i>

Validated for `ROCm 6.3.0 <https://example.invalid/6.3/>`_.

.. list-table:: Docker image components
    :header-rows: 1

    * - Docker image
      - hipBLASLt
      - MIOpen
      - Python
    * - `rocm/x:rocm6.3.0-py3.12 <https://example.invalid/layers/rocm/x/rocm6.3.0-py3.12/images/sha256-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa>`_ |docker-icon|
      - :version-ref:`hipBLASLt rocm_version`
      - |miopen-version|
      - 3.12
"""


def test_roles_unresolved_without_definitions_are_reported_not_versions():
    page = rst_import.read_page(ROLES, "roles.rst")
    entry = page.entries[0]
    assert entry["components"] == {"rocm": "6.3.0", "python": "3.12"}
    assert entry["labels"] == {
        "hipblaslt": "unresolved: :version-ref:`hipBLASLt rocm_version`",
        "miopen": "unresolved: |miopen-version|",
    }
    assert [(u.line, u.column, u.reason) for u in page.unread] == [
        (17, "hipBLASLt", "unresolved: :version-ref:`hipBLASLt rocm_version`"),
        (18, "MIOpen", "unresolved: |miopen-version|"),
    ]


def test_roles_resolve_with_the_historical_matrix_and_substitutions():
    csv = (FIX / "compatibility-matrix-historical-6.0.csv").read_text(encoding="utf-8")
    defs = releases.defs_of(releases.parse_rocm_csv(csv, "matrix.csv"))
    defs = rst_cells.Defs(
        defs.libraries, defs.releases, {"miopen-version": "MIOpen 3.3.0"}, {}, "matrix.csv"
    )
    page = rst_import.read_page(ROLES, "roles.rst", defs)
    assert page.entries[0]["components"] == {
        "rocm": "6.3.0",
        "hipblaslt": "0.10.0",  # the CSV's hipBLASLt row, ROCm 6.3.0 column
        "miopen": "3.3.0",
        "python": "3.12",
    }
    assert page.unread == ()
    latest = ROLES.replace("rocm_version 6.3.0", "rocm_version latest")
    got = rst_import.read_page(latest, "roles.rst", defs).entries[0]["components"]
    assert got["hipblaslt"] == "0.10.0" and defs.release("latest") == "6.3.3"


# ------------------------------------------------------------------ property ---

WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=10)
VERSIONS = st.lists(st.integers(0, 40), min_size=1, max_size=4).map(
    lambda xs: ".".join(map(str, xs))
)


@st.composite
def cells(draw, column: str) -> str:
    """A published cell: a version with the column's own name, a link, a role or emphasis."""
    version = draw(VERSIONS)
    url = f"https://example.invalid/{draw(WORDS)}/{version}"
    return draw(
        st.sampled_from(
            [
                version,
                f"{column} {version}",
                f"{column.title()} {version}",
                f"`{version} <{url}>`_",
                f"`{column} {version} <{url}>`__",
                f"**{version}** :sup:`1`",
                f":version-ref:`{column} rocm_version`",
                f"|{column}-version|",
                f"``{version}``",
                f"{draw(WORDS)}",
            ]
        )
    )


@st.composite
def pages(draw) -> str:
    columns = draw(st.lists(WORDS, min_size=1, max_size=4, unique=True))
    columns = [c for c in columns if c not in HEADERS and "docker" not in c]
    rows = []
    for n in range(draw(st.integers(1, 4))):
        ref = f"rocm/x:rocm6.3.{n}-py3.12"
        rows.append([ref] + [draw(cells(c)) for c in columns])
    head = "    * - Docker image\n" + "".join(f"      - {c}\n" for c in columns)
    body = "".join(
        "    * - " + r[0] + "\n" + "".join(f"      - {c}\n" for c in r[1:]) for r in rows
    )
    return ".. list-table:: t\n    :header-rows: 1\n\n" + head + body


@settings(max_examples=200, deadline=None)
@given(pages())
def test_no_component_value_holds_its_column_name_a_url_or_markup(text):
    page = rst_import.read_page(text, "page.rst")
    for entry in page.entries:
        for key, value in entry["components"].items():
            assert key.lower() not in value.lower() or key == value
            assert "://" not in value and "<" not in value and "`" not in value
            assert not re.search(r":[\w-]+:|\|", value)
            assert BARE.fullmatch(value), value


def test_an_image_without_evidence_of_its_backend_is_an_error_not_a_default():
    page = (
        "Images for the framework.\n\n.. list-table:: Docker image components\n"
        "    :header-rows: 1\n\n    * - Docker image\n      - Python\n"
        "    * - myorg/torch:2.5\n      - 3.12\n"
    )
    with pytest.raises(rst_import.RstImportError, match=r"page.rst:8: row 1 .*no evidence"):
        rst_import.read_page(page, "page.rst")
    said_rocm = page.replace("Images for the framework.", "Validated for ROCm 6.3.2.")
    (image,) = rst_import.read_page(said_rocm, "page.rst").images
    assert (image.backend, image.rocm) == ("rocm", "6.3.2")  # the page says ROCm
    cpu = page.replace("myorg/torch:2.5", "myorg/torch:cpu-2.5")
    assert rst_import.read_page(cpu, "page.rst").images[0].backend == "cpu"


def test_a_digest_that_is_not_64_hex_digits_is_reported_not_recorded():
    page = read("llama-cpp-compatibility.9c958afd.rst")  # its first link: "...201f10g"
    first, second = page.entries[:2]
    assert first["reference"] == "rocm/llama.cpp:llama.cpp-b6652.amd0_rocm7.0.0_ubuntu24.04_full"
    assert "digest" not in first  # never the 64 characters before the typo
    assert second["digest"] == (
        "sha256:be175932c3c96e882dfbc7e20e0e834f58c89c2925f48b222837ee929dfc47ee"
    )
    (typo,) = page.unread
    assert typo.image == first["alias"] and typo.cell.endswith("567201f10g")


LINKED = (
    ".. list-table:: t\n    :header-rows: 1\n\n    * - Docker image\n      - Python\n"
    '    * - <a href="https://hub.docker.com/layers/rocm/x/rocm6.3.0-py3.12/images/'
    'sha256-{hex}">x</a>\n      - 3.12\n'
)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="0123456789abcdefABCDEFgz", min_size=0, max_size=70))
def test_a_layer_link_gives_its_digest_only_when_it_is_64_hex_digits(hexes):
    page = rst_import.read_page(LINKED.format(hex=hexes), "page.rst")
    (entry,) = page.entries
    if re.fullmatch(r"[0-9a-f]{64}", hexes):
        assert entry["digest"] == "sha256:" + hexes and page.unread == ()
    else:
        assert "digest" not in entry
        assert [u.reason for u in page.unread] == [DIGEST_TYPO]
