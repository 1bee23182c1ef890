"""A known issue's GPU arch scope: an arch matches itself, a family (ending in x) every arch
it prefixes, on any GPU of a host class; no arch scope matches every host."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestrator.regression.known_issues import KNOWN_ARCHS, KnownIssue


def issue(*arch: str, **kw) -> KnownIssue:
    return KnownIssue(check="c", reason="r", arch=arch, **kw)


@pytest.mark.parametrize(
    ("arch", "host", "hit"),
    [
        (("gfx942",), "amd:gfx942", True),
        (("gfx942",), "amd:gfx90a", False),
        (("gfx94x",), "amd:gfx942", True),
        (("gfx94x",), "amd:gfx950", False),
        (("sm_90",), "nvidia:sm_90", True),
        (("sm_9x",), "nvidia:sm_90", True),
        (("sm_90",), "amd:gfx942+nvidia:sm_90", True),
        (("cpu",), "cpu", True),
        (("gfx942",), "cpu", False),
        ((), "amd:gfx942", True),
    ],
)
def test_arch_scope(arch, host, hit):
    assert issue(*arch).waiver().on_arch(host) is hit


def test_scoped_means_images_backend_or_arch():
    assert not KnownIssue(check="c", reason="r").waiver().scoped
    assert issue("gfx942").waiver().scoped
    assert KnownIssue(check="c", reason="r", backend="rocm").waiver().scoped
    assert KnownIssue(check="c", reason="r", images="rocm_*").waiver().scoped


@pytest.mark.parametrize("bad", ["gfx9999z", "sm90", "h100", "", "GFX942x1"])
def test_unknown_archs_are_refused(bad):
    with pytest.raises(ValueError, match="unknown GPU arch"):
        issue(bad)


@pytest.mark.parametrize("bad", ["gfx999", "gfx9fff", "sm_99", "sm_2x", "gfx3x"])
def test_well_formed_but_unknown_archs_are_refused(bad):
    """Shaped like an arch, named by no GPU: a typo that would scope the issue to nothing."""
    with pytest.raises(ValueError, match="unknown GPU arch"):
        issue(bad)


@given(st.sampled_from(sorted(KNOWN_ARCHS)))
def test_every_known_arch_and_its_family_is_accepted(arch):
    assert issue(arch).arch == (arch,)
    if arch != "cpu":
        family = arch.rstrip("a")[:-1] + "x"
        assert issue(family).arch == (family,)


@given(st.from_regex(r"\A(gfx[0-9][0-9a-f]{1,3}|sm_[0-9]{2,3}a?)\Z"))
def test_a_well_formed_name_is_accepted_exactly_when_known(name):
    if name in KNOWN_ARCHS:
        assert issue(name).arch == (name,)
    else:
        with pytest.raises(ValueError, match="unknown GPU arch"):
            issue(name)
