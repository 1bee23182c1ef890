"""The kernel-name -> library table (evidence.KERNEL_LIBRARIES) against real kernel names
copied from public captures (tests/fixtures/kernel-names/README.md names each source)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from valorch_probe import evidence

UNATTRIBUTED = "unattributed"


def attribution(name, vendor=None):
    """The library behind one kernel name, or UNATTRIBUTED when no pattern knows it."""
    return evidence.library_of_kernel(name, vendor) or UNATTRIBUTED


FIX = Path(__file__).resolve().parent.parent / "fixtures" / "kernel-names"
# Names a later, broader entry also matches on purpose: the table is read in order, and the
# earlier entry is the narrower truth (hipBLASLt's "_UserArgs_" Tensile names before the
# shared Tensile entry; cuBLAS's arch-numbered CUTLASS kernels before CUTLASS's namespace).
PRECEDENCE = {
    ("FlashMLA", "FlashAttention"),
    ("hipBLASLt", "rocBLAS/hipBLASLt (Tensile)"),
    ("cuBLAS/cuBLASLt", "CUTLASS"),
    ("AITER", "Composable Kernel"),
}


def real_rows():
    rows = []
    for line in (FIX / "real-names.tsv").read_text().splitlines():
        if line and not line.startswith("#"):
            name, vendor, lib, source = line.split("\t")
            rows.append((name, vendor, lib, source))
    return rows


ROWS = real_rows()
ATTRIBUTED = [r for r in ROWS if r[2] != UNATTRIBUTED]


@pytest.mark.parametrize("name,vendor,lib,source", ROWS, ids=lambda v: v[:48])
def test_every_real_name_maps_to_its_library(name, vendor, lib, source):
    assert source.strip()
    assert attribution(name, vendor) == lib


def test_the_fixture_covers_every_library_the_table_must_tell_apart():
    libs = {lib for _, _, lib, _ in ROWS}
    assert {
        "cuDNN",
        "cuBLAS/cuBLASLt",
        "hipBLASLt",
        "rocBLAS",
        "MIOpen",
        "Composable Kernel",
    } <= libs
    assert UNATTRIBUTED in libs
    # both the generated and the hand-tuned hipBLASLt GEMMs, both cuBLAS SIMT and tensor-op
    hip = [n for n, _, lib, _ in ROWS if lib == "hipBLASLt"]
    assert any(n.startswith("Custom_") for n in hip) and any(n.startswith("Cijk_") for n in hip)
    cublas = [n for n, _, lib, _ in ROWS if lib == "cuBLAS/cuBLASLt"]
    assert any("sgemm" in n for n in cublas) and any("xmma_gemm" in n for n in cublas)
    # Composable Kernel's tile attention and its GEMMs, both from real traces
    ck = [n for n, _, lib, _ in ROWS if lib == "Composable Kernel"]
    assert any("ck_tile::Fmha" in n for n in ck) and any("ck::kernel_gemm" in n for n in ck)


def test_miopen_naive_fallbacks_are_miopen_and_tensile_without_userargs_stays_shared():
    assert attribution("naive_conv_packed_wrw_nhwc_float_double_float", "amd") == "MIOpen"
    assert (
        attribution("Cijk_Ailk_Bljk_SB_MT128x64x8_SN_ISA90a", "amd")
        == "rocBLAS/hipBLASLt (Tensile)"
    )
    assert attribution("Cijk_Ailk_Bljk_SB_MT128x64x8_SN_ISA90a", "nvidia") == (UNATTRIBUTED)


def test_no_pattern_of_one_library_matches_another_librarys_real_names():
    """Every real name against every other library's pattern (all pairs, not a sample)."""
    clashes = [
        (name, lib, other, pattern)
        for name, vendor, lib, _ in ATTRIBUTED
        for pattern, other, who in evidence.KERNEL_LIBRARIES
        if other != lib
        and (who is None or who == vendor)
        and (lib, other) not in PRECEDENCE
        and re.search(pattern, name)
    ]
    assert clashes == []


@given(st.sampled_from(ATTRIBUTED))
def test_a_real_name_on_the_other_vendor_never_names_that_vendors_library(row):
    name, vendor, _, _ = row
    other = "amd" if vendor == "nvidia" else "nvidia"
    lib = evidence.library_of_kernel(name, other)
    vendors = {who for _, each, who in evidence.KERNEL_LIBRARIES if each == lib}
    assert lib is None or vendors == {None}


@given(
    st.text(
        alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_<>:, ", max_size=60
    ),
    st.sampled_from(["amd", "nvidia", None]),
)
def test_a_name_no_pattern_matches_is_unattributed(name, vendor):
    assume(not any(re.search(p, name) for p, _, _ in evidence.KERNEL_LIBRARIES))
    assert attribution(name, vendor) == UNATTRIBUTED
    assert evidence.libraries_of([name], vendor) == []


FAMILIES = {  # one rule per family: a name of the family, never another family's
    "FlashMLA": ("FlashAttention",),
    "FlashAttention-4": ("FlashAttention", "CUTLASS"),
    "Composable Kernel": ("AITER",),
    "MIOpen": ("Composable Kernel",),
}


@given(st.sampled_from([r for r in ATTRIBUTED if r[2] in FAMILIES]))
def test_each_family_rule_names_its_own_real_names_never_a_neighbour(row):
    name, vendor, lib, _ = row
    assert attribution(name, vendor) == lib
    assert attribution(name, None) == lib  # without the vendor too


def test_every_family_has_real_names_in_the_fixture():
    libs = [lib for _, _, lib, _ in ATTRIBUTED]
    for family in FAMILIES:
        assert family in libs, family
    assert any(n.startswith("_ZN2ck") for n, _, lib, _ in ATTRIBUTED if lib == "Composable Kernel")
    assert any("naive_conv_ab_" in n for n, _, lib, _ in ATTRIBUTED if lib == "MIOpen")


@given(st.sampled_from(["attn_fwd", "bwd_kernel_dk_dv", "bwd_kernel_dq", "bwd_preprocess"]))
def test_attn_fwd_is_aotriton_unless_flash_attns_triton_backend_ran_it(name):
    assert evidence.libraries_of([name], "amd") == ["AOTriton"]
    modules = ["torch", "flash_attn", "flash_attn.flash_attn_triton_amd"]
    assert evidence.libraries_of([name], "amd", modules) == ["Triton"]
