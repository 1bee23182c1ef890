"""A module whose version is not the release its package manager installed is named by the
audit (audit.version_findings), with the values of the real Debian torch image
(valorch/test:debian-torch: python3-torch 1.13.1+dfsg-4, torch metadata 1.13.0a0+gitunknown,
torch.__version__ 1.13.0a0); Debian versions split one way (components.debian_upstream)."""

from hypothesis import given
from hypothesis import strategies as st

from orchestrator import audit
from orchestrator.components import Component, Inventory, debian_upstream, same_release

EGG = "/usr/lib/python3/dist-packages/torch-1.13.0a0+gitunknown.egg-info"


def inventory(module: str, runtime: str, deb: str) -> Inventory:
    return Inventory(
        components=(
            Component(name="pytorch", value=module, source="pip", evidence=EGG),
            Component(
                name="pytorch.runtime", value=runtime, source="api", evidence="torch.__version__"
            ),
            Component(
                name="deb:libtorch1.13", value=deb, source="dpkg", extra={"source": "pytorch"}
            ),
            Component(
                name="deb:python3-torch", value=deb, source="dpkg", extra={"source": "pytorch"}
            ),
            Component(name="numpy", value="1.24.2", source="pip", evidence="x"),
            Component(
                name="deb:python3-numpy",
                value="1:1.24.2-1+deb12u1",
                source="dpkg",
                extra={"source": "numpy"},
            ),
        )
    )


def test_debian_torch_names_both_versions_and_is_not_clean():
    found = audit.compare(
        inventory("1.13.0a0+gitunknown", "1.13.0a0", "1.13.1+dfsg-4"), {"pytorch": "1.13"}
    )
    (differs,) = [f for f in found if f.kind == "differs"]
    assert differs.found == "1.13.0a0+gitunknown"
    assert differs.expected == "1.13.1+dfsg-4 (dpkg python3-torch)"
    assert (
        "torch.__version__ 1.13.0a0" in differs.message and "the versions differ" in differs.message
    )
    assert audit.has_drift(found) and audit.exit_code(found) == 1


def test_the_same_release_under_a_repack_suffix_and_an_epoch_is_clean():
    found = audit.compare(inventory("1.13.1", "1.13.1", "1.13.1+dfsg-4"), {"pytorch": "1.13"})
    assert not [f for f in found if f.kind == "differs"] and audit.exit_code(found) == 0


@given(
    st.from_regex(r"[1-9][0-9]?\.[0-9]{1,2}\.[0-9]{1,2}", fullmatch=True),
    st.sampled_from(["", "1:", "2:"]),
    st.sampled_from(["1", "5ubuntu1", "1+deb12u1", "0ubuntu0.22.04.1"]),
)
def test_debian_versions_split_into_upstream_and_revision(upstream, epoch, revision):
    assert debian_upstream(f"{epoch}{upstream}-{revision}") == (upstream, revision)
    assert debian_upstream(upstream) == (upstream, "")
    assert same_release(upstream + "+dfsg", upstream) and same_release(
        upstream + ".60300", upstream
    )
    assert not same_release(upstream + "a0", upstream)
