from pathlib import Path

import pytest

from orchestrator.catalog.core import Catalog, load_job, parse_tag, short_alias
from orchestrator.errors import AmbiguousImageError, SpecError, UnknownImageError

ROOT = Path(__file__).resolve().parents[2]
SEED = (
    Path(__file__).resolve().parents[1] / "fixtures" / "seeds" / "rocm-pytorch-compatibility.rst"
)  # a copy of ROCm's published page (docs/design.md, "The pages valorch replaces")


@pytest.fixture(scope="module")
def catalog():
    return Catalog.load(ROOT / "images")


def test_all_eight_rocm_tags_with_digest_and_every_component(catalog):
    rocm = [i for i in catalog.images if i.family == "rocm"]
    assert len(rocm) == 8
    for image in rocm:
        assert image.reference.startswith("rocm/pytorch:rocm6.3_")
        assert image.digest and image.digest.startswith("sha256:") and len(image.digest) == 71
        assert set(image.components) >= {
            "pytorch",
            "ubuntu",
            "python",
            "apex",
            "torchvision",
            "tensorboard",
            "magma",
            "ucx",
            "ompi",
            "ofed",
            "rocm",
        }
    assert len({i.digest for i in rocm}) == 8


def test_catalog_digests_are_the_seed_tables(catalog):
    text = SEED.read_text()
    for image in (i for i in catalog.images if i.family == "rocm"):
        tag = image.reference.split(":", 1)[1]
        assert f"{tag}/images/sha256-{image.digest[7:]}" in text


def test_short_alias_resolves_to_full_tag(catalog):
    image = catalog.resolve("rocm6.3_py3.12_pytorch_2.4")
    assert image.reference == "rocm/pytorch:rocm6.3_ubuntu24.04_py3.12_pytorch_release_2.4.0"
    assert image.components["python"] == "3.12" and image.components["ubuntu"] == "24.04"
    assert catalog.resolve("rocm6.3_ubuntu24.04_py3.12_pytorch_release_2.4.0") is image
    assert catalog.resolve(image.reference) is image


def test_ambiguous_alias_lists_candidates(catalog):
    with pytest.raises(AmbiguousImageError) as exc:
        catalog.resolve("rocm6.3_py3.9_pytorch_1.13")
    assert "rocm6.3_ubuntu22.04_py3.9_pytorch_1.13" in str(exc.value)
    assert "rocm6.3_ubuntu20.04_py3.9_pytorch_1.13" in str(exc.value)
    assert exc.value.exit_code == 2


def test_unknown_rocm_tag_is_parsed_into_expectations(catalog):
    image = catalog.resolve("rocm6.4_ubuntu24.04_py3.12_pytorch_release_2.6.0")
    assert image.derived and image.backend == "rocm"
    assert image.components == {
        "rocm": "6.4",
        "ubuntu": "24.04",
        "python": "3.12",
        "pytorch": "2.6.0",
    }
    assert image.reference == "rocm/pytorch:rocm6.4_ubuntu24.04_py3.12_pytorch_release_2.6.0"


def test_cuda_tag_parses():
    image = parse_tag("pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime")
    assert (
        image.backend == "cuda"
        and image.components["cuda"] == "12.4"
        and image.components["cudnn"] == "9"
    )


def test_unknown_name_suggests(catalog):
    with pytest.raises(UnknownImageError) as exc:
        catalog.resolve("rocm6.3_py3.12_pytorch_2.44x")
    assert "did you mean" in str(exc.value)


def test_selectors(catalog):
    assert len(catalog.select(["family:rocm"])) == 8
    assert {i.alias for i in catalog.select(["rocm6.3_*_pytorch_2.4"])} == {
        "rocm6.3_ubuntu24.04_py3.12_pytorch_2.4",
        "rocm6.3_ubuntu22.04_py3.10_pytorch_2.4",
        "rocm6.3_ubuntu22.04_py3.9_pytorch_2.4",
    }
    with pytest.raises(UnknownImageError):
        catalog.select(["nomatch_*"])


def test_short_alias_drops_distro():
    assert short_alias("rocm6.3_ubuntu22.04_py3.10_pytorch_2.3") == "rocm6.3_py3.10_pytorch_2.3"


def test_local_test_images_catalogued(catalog):
    old = catalog.resolve("cpu_debian12_py3.11_pytorch_1.13")
    new = catalog.resolve("cpu_debian12_py3.11_pytorch_2.13")
    assert old.reference == "valorch/test:debian-torch" and old.local
    assert new.components["pytorch"] == "2.13.0"


def test_duplicate_alias_is_refused(tmp_path):
    (tmp_path / "a.yaml").write_text(
        "family: cpu\nbackend: cpu\nimages:\n  - alias: x\n    reference: a:1\n"
        "  - alias: x\n    reference: b:1\n"
    )
    with pytest.raises(SpecError) as exc:
        Catalog.load(tmp_path)
    assert "a.yaml:6" in str(exc.value) and "already defined" in str(exc.value)


def test_catalog_entry_errors_name_file_line_key(tmp_path):
    (tmp_path / "a.yaml").write_text(
        "family: cpu\nbackend: cpu\nimages:\n  - alias: x\n    reference: a:1\n    backnd: cpu\n"
    )
    with pytest.raises(SpecError) as exc:
        Catalog.load(tmp_path)
    assert "a.yaml:6" in str(exc.value) and "backnd" in str(exc.value)


@pytest.mark.parametrize(
    "body,line,key",
    [
        (
            "name: j\nimages: [host]\nsuites:\n  - name: smoke\n    deadlin: 3\n",
            5,
            "suites.0.deadlin",
        ),
        (
            "name: j\nimages: [host]\nsuites:\n  - name: smoke\n    deadline: soon\n",
            5,
            "suites.0.deadline",
        ),
        ("name: j\nimages: [host]\n", 1, "suites"),
        ("name: j\nimages: [host]\nsuites: [smoke, nosuch]\n", 3, "suites.1.name"),
    ],
)
def test_bad_job_spec_names_file_line_key(tmp_path, body, line, key):
    path = tmp_path / "job.yaml"
    path.write_text(body)
    with pytest.raises(SpecError) as exc:
        load_job(path)
    assert f"{path}:{line}" in str(exc.value)
    assert key in str(exc.value)


def test_job_with_unknown_image_names_line(tmp_path, catalog):
    path = tmp_path / "job.yaml"
    path.write_text("name: j\nimages:\n  - host\n  - nope\nsuites: [smoke]\n")
    with pytest.raises(SpecError) as exc:
        load_job(path, catalog)
    assert f"{path}:4" in str(exc.value) and "nope" in str(exc.value)


def test_yaml_syntax_error_names_line(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text("name: j\nimages: [host\n")
    with pytest.raises(SpecError) as exc:
        load_job(path)
    assert f"{path}:3" in str(exc.value) and "invalid YAML" in str(exc.value)


def test_missing_job_file(tmp_path):
    with pytest.raises(SpecError) as exc:
        load_job(tmp_path / "nope.yaml")
    assert "no such file" in str(exc.value)
