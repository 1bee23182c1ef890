"""regression.pairing: the --pair rule (each * the same text on both sides, first rule first)."""

import pytest

from orchestrator.errors import InputError
from orchestrator.regression import pairing
from orchestrator.regression.rule import Obs, Side

B = ("rocm6.3_ubuntu24.04_py3.12_pytorch_2.4", "rocm6.3_ubuntu22.04_py3.10_pytorch_2.3", "cpu_x")
H = (
    "rocm6.4_ubuntu22.04_py3.10_pytorch_2.3",
    "rocm6.4_ubuntu24.04_py3.12_pytorch_2.4",
    "rocm6.4_extra",
)


def test_each_star_matches_the_same_text():
    got = pairing.pairs(B, H, pairing.parse(["rocm6.3_*=rocm6.4_*"]))
    assert got == {B[0]: H[1], B[1]: H[0]}


def test_several_stars_and_rule_order():
    rules = pairing.parse(
        ["rocm6.3_*_py3.12_pytorch_*=rocm6.4_*_py3.12_pytorch_*", "rocm6.3_*=rocm6.4_*"]
    )
    assert pairing.pairs(B, H, rules) == {B[0]: H[1], B[1]: H[0]}
    assert pairing.pairs(B, H, pairing.parse(["rocm6.3_*_2.4=rocm6.4_*_2.5"])) == {}


@pytest.mark.parametrize("bad", ["a*", "a*=", "=b*", "a*=b", "a *=b *", "a*=b*=c*"])
def test_bad_rules(bad):
    with pytest.raises(InputError) as exc:
        pairing.parse([bad])
    assert "--pair" in exc.value.message


def test_apply_renames_both_sides():
    base = Side(
        "b",
        "batch",
        (Obs(env=B[0], check="c", status="pass"), Obs(env="cpu_x", check="c", status="pass")),
        digests=((B[0], "sha256:1"),),
    )
    head = Side("h", "batch", (Obs(env=H[1], check="c", status="fail"),))
    nb, nh, paired = pairing.apply(base, head, pairing.parse(["rocm6.3_*=rocm6.4_*"]))
    joint = f"{B[0]} → {H[1]}"
    assert paired == {B[0]: H[1]}
    assert (
        nb.envs == (joint, "cpu_x") and nh.envs == (joint,) and nb.digests == ((joint, "sha256:1"),)
    )


def test_a_base_image_the_head_keeps_is_compared_with_itself_and_its_successor():
    """Second look, bug 13: rel-2.0 holds the 1.13 image and the 2.13 one; pairing 1.* with
    2.* left the head's own 1.13 without a base (38 checks "new") and printed the sides as
    "…1.13 → …2.13 → …1.13, …1.13 → …2.13". The kept image now meets itself as well, and a
    header lists each side's own aliases plus the pairs."""
    from orchestrator.regression.rule import compare
    from orchestrator.render.sides import own_aliases, paired_names

    old, new = "cpu_py3.11_pytorch_1.13", "cpu_py3.11_pytorch_2.13"
    base = Side("rel-1.0", "version", (Obs(env=old, check="c", status="pass"),))
    head = Side(
        "rel-2.0",
        "version",
        (Obs(env=old, check="c", status="pass"), Obs(env=new, check="c", status="fail")),
    )
    nb, nh, paired = pairing.apply(
        base, head, pairing.parse(["cpu_py3.11_pytorch_1.*=cpu_py3.11_pytorch_2.*"])
    )
    assert paired == {old: new}
    report = compare(nb, nh)
    by_env = {(c.env, c.check): c.kind for c in report.changes}
    assert by_env[(old, "c")] == "same"  # the kept image against itself
    assert by_env[(f"{old} → {new}", "c")] == "regressed"  # and against its successor
    assert own_aliases(nb.envs, "base") == (old,)
    assert own_aliases(nh.envs, "head") == (old, new)
    assert paired_names(nh.envs) == (f"{old} → {new}",)
