"""A known issue's GPU arch scope: an arch matches itself, a family (ending in x) every arch
it prefixes, on any GPU of a host class; no arch scope matches every host."""

from __future__ import annotations

import pytest

from orchestrator.regression.known_issues import KnownIssue


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
    assert issue(*arch).on_arch(host) is hit


def test_scoped_means_images_backend_or_arch():
    assert not KnownIssue(check="c", reason="r").scoped
    assert issue("gfx942").scoped
    assert KnownIssue(check="c", reason="r", backend="rocm").scoped
    assert KnownIssue(check="c", reason="r", images="rocm_*").scoped


@pytest.mark.parametrize("bad", ["gfx9999z", "sm90", "h100", "", "GFX942x1"])
def test_unknown_archs_are_refused(bad):
    with pytest.raises(ValueError, match="unknown GPU arch"):
        issue(bad)
