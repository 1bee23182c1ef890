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
