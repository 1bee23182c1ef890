import pytest

from orchestrator import imageref
from orchestrator.catalog.core import Catalog, from_reference
from orchestrator.cli import app  # noqa: F401 - the CLI imports cleanly with the new module
from orchestrator.errors import InputError

D = "sha256:" + "ab" * 32


@pytest.mark.parametrize(
    "text, domain, path, tag, digest, repository",
    [
        ("docker.io/org/name:tag", "docker.io", "org/name", "tag", None, "org/name"),
        (
            "python:3.12-slim-bookworm",
            "docker.io",
            "library/python",
            "3.12-slim-bookworm",
            None,
            "python",
        ),
        ("ubuntu", "docker.io", "library/ubuntu", "latest", None, "ubuntu"),
        (f"localhost:5000/x@{D}", "localhost:5000", "x", None, D, "localhost:5000/x"),
        (
            f"127.0.0.1:5000/a/b-c:v1@{D}",
            "127.0.0.1:5000",
            "a/b-c",
            "v1",
            D,
            "127.0.0.1:5000/a/b-c",
        ),
        (
            "ghcr.example/org/img:1.0",
            "ghcr.example",
            "org/img",
            "1.0",
            None,
            "ghcr.example/org/img",
        ),
        ("localhost/x", "localhost", "x", "latest", None, "localhost/x"),
        (
            "docker://rocm/pytorch:latest",
            "docker.io",
            "rocm/pytorch",
            "latest",
            None,
            "rocm/pytorch",
        ),
        ("[::1]:5000/x:y", "[::1]:5000", "x", "y", None, "[::1]:5000/x"),
    ],
)
def test_parse(text, domain, path, tag, digest, repository):
    ref = imageref.parse(text)
    assert (ref.domain, ref.path, ref.tag, ref.digest, ref.repository) == (
        domain,
        path,
        tag,
        digest,
        repository,
    )
    assert imageref.parse(str(ref)) == ref


def test_pinned_and_reference():
    ref = imageref.parse("localhost:5000/x:v1")
    assert ref.reference == "v1"
    assert ref.pinned(D) == f"localhost:5000/x@{D}"
    assert ref.with_digest(D).reference == D
    assert imageref.parse("python:3.12").tagged() == "python:3.12"


@pytest.mark.parametrize(
    "text, words",
    [
        ("localhost:5000/x@sha256:abc", "64 lower-case hex"),
        (f"x@md5:{'a' * 32}", "not sha256"),
        (f"x@sha256:{'A' * 64}", "lower-case hex"),
        ("https://registry.example/x:1", "unknown scheme 'https://'"),
        ("oci://x", "unknown scheme"),
        ("Upper/Case:tag", "repository name"),
        ("x:-bad", "tag '-bad'"),
        ("x::y", "is not valid"),
        ("a//b", "repository name"),
        ("", "empty"),
        ("bad_host:99999999/x", "registry"),
    ],
)
def test_malformed_is_exit_2(text, words):
    with pytest.raises(InputError) as exc:
        imageref.parse(text)
    assert exc.value.exit_code == 2
    assert words in str(exc.value)


def test_any_reference_resolves_without_expectations(tmp_path):
    (tmp_path / "x.yaml").write_text(
        "family: cpu\nbackend: cpu\nimages:\n  - alias: py\n    reference: python:3.12-slim-bookworm\n"
    )
    cat = Catalog.load(tmp_path)
    image = cat.resolve(f"localhost:5000/team/tool@{D}")
    assert image.derived and image.components == {} and image.digest == D and image.backend == "cpu"
    assert image.reference == f"localhost:5000/team/tool@{D}"
    assert cat.resolve("docker.io/library/python:3.12-slim-bookworm").alias == "py"
    assert from_reference("registry.example/amd/rocm-terminal:6.3").backend == "rocm"
    with pytest.raises(InputError):
        cat.resolve("localhost:5000/x@sha256:123")
