"""An image present on an engine is named by one digest on every engine that holds it
(imageref.identity): RepoDigests of other repositories (the same image pushed elsewhere
once) never name it; its own repository's manifest digest does; else its image id."""

from hypothesis import given
from hypothesis import strategies as st

from orchestrator.imageref import identity

HEX = st.text("0123456789abcdef", min_size=64, max_size=64).map(lambda h: "sha256:" + h)
REPOS = st.sampled_from(
    [
        "127.0.0.1:5000/team/app",
        "registry.example:443/x/y",
        "rocm/pytorch",
        "ubuntu",
        "valorch/base",
    ]
)


@given(st.lists(st.tuples(REPOS, HEX), max_size=5), HEX)
def test_a_local_image_is_its_id_whatever_it_was_pushed_to(pushed, image_id):
    others = [f"{r}@{d}" for r, d in pushed if r != "valorch/test"]
    assert identity("valorch/test:local", others, image_id) == image_id


@given(st.lists(st.tuples(REPOS, HEX), max_size=5), HEX, HEX)
def test_the_references_own_repository_names_it_on_every_engine(pushed, mine, image_id):
    ref = "127.0.0.1:5000/team/app:nightly"
    listed = [f"{r}@{d}" for r, d in pushed if r != "127.0.0.1:5000/team/app"]
    engine_a = [*listed, f"127.0.0.1:5000/team/app@{mine}"]
    engine_b = [f"127.0.0.1:5000/team/app@{mine}"]  # pulled there, pushed nowhere else
    assert identity(ref, engine_a, image_id) == identity(ref, engine_b, image_id) == mine


@given(HEX, HEX, HEX)
def test_a_pinned_reference_keeps_its_digest_when_listed(a, b, image_id):
    listed = [f"rocm/pytorch@{a}", f"rocm/pytorch@{b}"]
    assert identity(f"rocm/pytorch@{b}", listed, image_id) == b
    assert identity(f"docker.io/rocm/pytorch@{b}", listed, image_id) == b
    assert identity("docker.io/library/ubuntu:22.04", [f"ubuntu@{a}"], image_id) == a


def test_an_unparsable_reference_is_the_image_id():
    assert (
        identity("UPPER/Case", ["x@sha256:" + "0" * 64], "sha256:" + "1" * 64)
        == "sha256:" + "1" * 64
    )
