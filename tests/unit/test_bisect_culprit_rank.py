"""The ranking of changed components by their relation to a bisected check (pure)."""

from hypothesis import given
from hypothesis import strategies as st

from orchestrator.regression.culprit import classify, libraries_of, rank
from orchestrator.spec import Change

CHANGES = [
    Change("changed", n, "1", "2")
    for n in (
        "deb:libc6",
        "pip:requests",
        "pytorch",
        "deb:miopen-hip",
        "rocblas",
        "pip:numpy",
        "os",
        "miopen",
        "deb:hipblaslt",
        "torchvision",
    )
]


def test_a_miopen_check_puts_miopen_then_its_dependencies_then_the_framework_then_the_rest():
    ranked = rank(CHANGES, "features.conv.fp16", "MIOpen/cuDNN", "conv2d (float16)")
    assert [s.change.subject for s in ranked] == [
        "miopen",
        "deb:miopen-hip",  # the check's library (headline before package listing)
        "rocblas",
        "deb:hipblaslt",  # what MIOpen is built on
        "pytorch",
        "torchvision",
        "pip:numpy",  # framework
        "pip:requests",  # other Python packages
        "os",
        "deb:libc6",
    ]  # system
    assert ranked[0].tier == "library" and "miopen" in ranked[0].why
    assert ranked[2].tier == "dependency" and ranked[2].why == "miopen depends on rocblas"


def test_a_matmul_check_ranks_blas_first_and_cpu_blas_as_dependency():
    changes = [
        Change("changed", n, "1", "2") for n in ("deb:libopenblas0", "miopen", "rocblas", "pytorch")
    ]
    ranked = rank(changes, "smoke.matmul.fp32", "hipBLAS/cuBLAS", "matmul (float32)")
    assert [(s.change.subject, s.tier) for s in ranked] == [
        ("rocblas", "library"),
        ("deb:libopenblas0", "dependency"),
        ("pytorch", "framework"),
        ("miopen", "system"),
    ]


def test_a_declared_check_names_its_component_by_id_or_feature():
    assert classify("pip:vfmath", "command.vfmath-dot", None, "vfmath dot product")[0] == "library"
    assert classify("deb:zlib1g", "command.vfmath-dot", None, "vfmath")[0] == "system"
    assert libraries_of("Composable Kernel") == ["composable kernel"] and libraries_of(None) == []
    assert rank([Change("unchanged", "pytorch", "1", "1")], "x", None) == []


def test_the_checks_own_framework_comes_first_among_frameworks():
    changes = [
        Change("removed", n, "1")
        for n in ("numpy", "pip:numpy", "pip:torch", "pytorch", "tensorflow")
    ]
    assert [s.change.subject for s in rank(changes, "smoke.matmul.fp32", "hipBLAS/cuBLAS")] == [
        "pytorch",
        "pip:torch",
        "tensorflow",
        "numpy",
        "pip:numpy",
    ]
    assert rank(changes, "tf.conv2d.fp32", "MIOpen/cuDNN")[0].change.subject == "tensorflow"


def test_on_a_cpu_image_the_removed_framework_ranks_first_and_no_gpu_library_is_blamed():
    """bisect of smoke.matmul.fp32 over CPU images ending with one without torch: the row's
    GPU label (hipBLAS/cuBLAS) says nothing on a CPU image, and torch removed comes first."""
    changes = [
        Change("removed", n, "1")
        for n in ("deb:libblas3", "deb:liblapack3", "pip:numpy", "pytorch", "pip:torch")
    ]
    ranked = rank(changes, "smoke.matmul.fp32", "cpu", "matmul (float32)")
    assert [s.change.subject for s in ranked[:2]] == ["pytorch", "pip:torch"]
    assert ranked[0].why == "the check's framework (pytorch) was removed"
    assert not any("hipblas" in s.why for s in ranked)
    assert {s.change.subject: s.tier for s in ranked}["deb:libblas3"] == "library"


def test_components_are_matched_by_name_never_by_substring():
    """``openmp`` is not libopenmpt (a music-module decoder), hipBLAS is not hipBLASLt,
    torch is not torchvision; the shared library's ``lib`` and soname digits do not count."""
    from orchestrator.regression.culprit import classify

    assert classify("deb:libopenmpt0", "smoke.matmul.fp32", "cpu")[0] == "system"
    assert classify("deb:libgomp1", "smoke.matmul.fp32", "cpu") == (
        "dependency",
        "cpu depends on gomp",
    )
    assert classify("deb:libhipblaslt0", "kernels.gemm.fp16", "hipBLAS")[0] != "library"
    assert classify("deb:libhipblas2", "kernels.gemm.fp16", "hipBLAS")[0] == "library"
    assert classify("pip:nvidia-cudnn-cu12", "kernels.conv2d.fp16", "cuDNN")[0] == "library"


@given(
    st.sampled_from(["openmp", "hipblas", "torch", "nccl", "miopen", "cudnn", "gomp"]),
    st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=6),
    st.sampled_from(["", "lib"]),
    st.text("0123456789", max_size=2),
)
def test_a_longer_word_is_another_component(stem_word, more, lib, digits):
    from orchestrator.regression.culprit import _hits

    assert _hits(f"{lib}{stem_word}{more}{digits}", [stem_word]) is None
    assert _hits(f"{lib}{stem_word}{digits}", [stem_word]) == stem_word
