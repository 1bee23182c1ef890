"""Each library's version encoding, decoded as its header defines it (valorch_probe/
loaded_libs.py cites them): a round trip over every version the encoding can hold."""

from hypothesis import given
from hypothesis import strategies as st

from valorch_probe import loaded_libs

minor = st.integers(0, 99)
patch = st.integers(0, 99)


@given(st.integers(9, 99), minor, patch)
def test_cudnn_9_and_later(major, mi, pa):
    # cudnn_version.h since 9.0: CUDNN_VERSION = CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + PATCH
    assert loaded_libs.decode("cudnn", [major * 10000 + mi * 100 + pa]) == "%d.%d.%d" % (
        major,
        mi,
        pa,
    )


@given(st.integers(1, 8), st.integers(0, 9), patch)
def test_cudnn_before_9(major, mi, pa):
    # cudnn_version.h up to 8.x: CUDNN_VERSION = CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + PATCH
    assert loaded_libs.decode("cudnn", [major * 1000 + mi * 100 + pa]) == "%d.%d.%d" % (
        major,
        mi,
        pa,
    )


@given(st.integers(2, 9), minor, patch)
def test_nccl_code(major, mi, pa):
    # nccl.h: NCCL_VERSION(X,Y,Z) ((X) <= 2 && (Y) <= 8) ? X*1000+Y*100+Z : X*10000+Y*100+Z
    old = major <= 2 and mi <= 8
    code = major * 1000 + mi * 100 + pa if old else major * 10000 + mi * 100 + pa
    assert loaded_libs.decode("nccl", [code]) == "%d.%d.%d" % (major, mi, pa)


@given(st.integers(10, 99), st.integers(0, 9))
def test_cuda_runtime(major, mi):
    # CUDART_VERSION = 1000 * major + 10 * minor
    assert loaded_libs.decode("cudart", [major * 1000 + mi * 10]) == "%d.%d" % (major, mi)


@given(st.integers(1, 99), st.integers(0, 99), st.integers(0, 99999))
def test_hip_runtime(major, mi, pa):
    # hip_version.h: HIP_VERSION = HIP_VERSION_MAJOR * 10000000 + MINOR * 100000 + PATCH
    assert loaded_libs.decode("hip", [major * 10000000 + mi * 100000 + pa]) == "%d.%d.%d" % (
        major,
        mi,
        pa,
    )


@given(st.lists(st.integers(-5, 5), max_size=4), st.sampled_from(["cudart", "prop:x", "nvrtc"]))
def test_failed_calls_give_no_version(raw, how):
    # a call that failed leaves the -1 it was given (or nothing): never a made-up version
    if not raw or any(x < 0 for x in raw):
        assert loaded_libs.decode(how, raw) is None


def test_real_answers():
    assert loaded_libs.decode("cudnn", [90100]) == "9.1.0"
    assert loaded_libs.decode("cudnn", [8907]) == "8.9.7"
    assert loaded_libs.decode("nccl", [22105]) == "2.21.5"
    assert loaded_libs.decode("nccl", [2804]) == "2.8.4"
    # RCCL keeps NCCL's encoding (RCCL's src/nccl.h.in, NCCL_VERSION(X,Y,Z)): 2.18.4 and the
    # 2.13.4 that Debian's librccl1 5.4.3 answers (tests/fixtures/rocm-rccl/)
    assert loaded_libs.decode("nccl", [21804]) == "2.18.4"
    assert loaded_libs.decode("nccl", [21304]) == "2.13.4"
    assert loaded_libs.decode("hip", [60241134]) == "6.2.41134"
    assert loaded_libs.decode("cublaslt", [120405]) == "12.4.5"
