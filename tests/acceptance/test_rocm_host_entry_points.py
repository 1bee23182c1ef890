"""ROCm library rows with a host-side C entry point (hipTensor, rocDecode, RPP, MIVisionX's
OpenVX, rocAL) call it through ctypes and say exactly what they called and what it answered,
still `partial` (the call is not the row's feature); a library the loader refuses or a wrong
answer is a `fail`; a library without the entry point stays "present, not exercised".

The libraries here are fakes built with `cc -shared` that export the same symbols with the
signatures of the libraries' public headers (docs/checks.md, "Host entry points"), answering
distinctive values: the test proves the ctypes path calls the symbol and reports its answer,
not that ROCm works. The real probe runs inside the fake ROCm test image with the fakes
mounted as a second ROCm root, as in test_rocm_presence_rows.py."""

import json
import shutil
import subprocess

import pytest
from gpu_fakes import ROOT

from valorch_probe import MARKER

HIPTENSOR_2 = r"""
#include <stddef.h>
size_t hiptensorGetVersion(void) { return 20103; }
const char *hiptensorGetErrorString(int e) { return e == 0 ? "HIPTENSOR_STATUS_SUCCESS" : "OTHER"; }
"""
HIPTENSOR_1 = "int hiptensor_internal_only(void) { return 0; }\n"  # 1.x: no C-linkage entry point
ROCDECODE = r"""
const char *rocDecGetErrorName(int s) { return s == -8 ? "ROCDEC_NOT_SUPPORTED" : "UNKNOWN_ERROR"; }
"""
RPP_1 = r"""
#include <stdlib.h>
typedef struct { size_t batch; unsigned threads; } handle;
int rppCreateWithBatchSize(void **h, size_t n, unsigned threads) {
  handle *p = malloc(sizeof *p); p->batch = n; p->threads = threads; *h = p; return 0; }
int rppGetBatchSize(void *h, size_t *n) { *n = ((handle *)h)->batch; return 0; }
int rppDestroyHost(void *h) { free(h); return 0; }
"""
RPP_2 = r"""
#include <stdlib.h>
typedef struct { size_t batch; } handle;
int rppCreate(void **h, size_t n, unsigned threads, void *stream, int backend) {
  if (backend != 0 || stream) return 5;  /* only the host backend, no stream */
  handle *p = malloc(sizeof *p); p->batch = n; *h = p; return 0; }
int rppGetBatchSize(void *h, size_t *n) { *n = ((handle *)h)->batch + 1; return 0; }  /* wrong on purpose */
int rppDestroy(void *h, int backend) { free(h); return backend; }
"""
OPENVX = r"""
#include <stdint.h>
#include <stddef.h>
static int ctx_obj;
void *vxCreateContext(void) { return &ctx_obj; }
int vxGetStatus(void *r) { return r == &ctx_obj ? 0 : -1; }
int vxQueryContext(void *c, int attr, void *p, size_t n) {
  if (c != &ctx_obj) return -1;
  if (attr == 0x80100 && n == 2) { *(uint16_t *)p = 0x00D; return 0; }
  if (attr == 0x80102 && n == 4) { *(uint32_t *)p = 57; return 0; }
  return -2; }
int vxReleaseContext(void **c) { *c = 0; return 0; }
"""
ROCAL_OK = r"""
static int ctx_obj;
void *rocalCreate(unsigned long batch, int affinity, int gpu, unsigned long threads, unsigned long depth, int type) {
  return (batch == 2 && affinity == 1 && type == 0) ? &ctx_obj : 0; }
int rocalGetStatus(void *c) { return c == &ctx_obj ? 0 : 1; }
int rocalRelease(void *c) { return 0; }
"""
ROCAL_BROKEN = ROCAL_OK.replace("return c == &ctx_obj ? 0 : 1;", "return 3;")


def build(lib_dir, name, source):
    src = lib_dir / (name + ".c")
    src.write_text(source)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib_dir / name), str(src)], check=True)
    src.unlink()


def tree(tmp_path, libs):
    """A ROCm root with hipTensor's and RPP's real version headers (tests/fixtures/rocm-libs) and the fakes."""
    root = tmp_path / "rocm"
    shutil.copytree(
        ROOT / "tests" / "fixtures" / "rocm-libs" / "opt" / "rocm-6.3.0" / "include",
        root / "include",
    )
    (root / "lib").mkdir()
    for name, source in libs.items():
        if source is None:
            (root / "lib" / name).write_bytes(b"")  # a file the loader refuses
        else:
            build(root / "lib", name, source)
    return root


def probe_in_fake_rocm(tmp_path, root):
    probe = tmp_path / "probe"
    shutil.copytree(
        ROOT / "valorch_probe",
        probe / "valorch_probe",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    argv = [
        "docker",
        "run",
        "--rm",
        "--network",
        "none",
        "--read-only",
        "--tmpfs",
        "/tmp",
        "-v",
        f"{probe}:/opt/valorch:ro",
        "-v",
        f"{root}:/opt/rocm-6.4.0:ro",
        "-w",
        "/opt/valorch",
        "-e",
        "PYTHONPATH=/opt/valorch",
        "-e",
        "PYTHONDONTWRITEBYTECODE=1",
        "valorch/test:fake-rocm",
        "python3",
        "-m",
        "valorch_probe",
        "run",
        "--suite",
        "features",
        "--check",
        "features.rocm.*",
        "--expect",
        json.dumps({"backend": "rocm"}),
        "--device",
        "cpu",
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {
        r["check"]: r
        for r in (
            json.loads(ln[len(MARKER) :])
            for ln in proc.stdout.splitlines()
            if ln.startswith(MARKER)
        )
        if r["type"] == "result"
    }


@pytest.mark.docker
def test_host_entry_points_are_called_and_reported_but_never_a_pass(tmp_path):
    root = tree(
        tmp_path,
        {
            "libhiptensor.so.2": HIPTENSOR_2,
            "librocdecode.so.0": ROCDECODE,
            "librpp.so.1.9.1": RPP_1,
            "libopenvx.so.1": OPENVX,
            "librocal.so.2": ROCAL_OK,
        },
    )
    res = probe_in_fake_rocm(tmp_path, root)
    said = {}
    for name in ("hiptensor", "rocdecode", "rpp", "mivisionx", "rocal"):
        r = res["features.rocm." + name]
        assert r["status"] == "partial", (name, r["status"], r["message"])
        assert "present, host API called" in r["message"] and "not exercised" in r["message"], r[
            "message"
        ]
        assert r["metrics"]["proven"] == "host-call" and r["metrics"]["library_file"].startswith(
            "/opt/rocm-6.4.0/lib/"
        )
        said[name] = r["metrics"]["host_call"]
    # each answer is the fake's own, read through the signature its header declares
    assert said["hiptensor"] == (
        "hiptensorGetVersion() = 20103 (2.1.3), "
        "hiptensorGetErrorString(0) = 'HIPTENSOR_STATUS_SUCCESS'"
    )
    assert said["rocdecode"] == "rocDecGetErrorName(-8) = 'ROCDEC_NOT_SUPPORTED'"
    assert (
        said["rpp"]
        == "rppCreateWithBatchSize: a host handle (batch 3) created, rppGetBatchSize read 3 back, destroyed"
    )
    assert said["mivisionx"] == (
        "vxCreateContext: an OpenVX context (AMD, 57 kernels registered) queried and released"
    )
    assert (
        said["rocal"]
        == "rocalCreate: a CPU pipeline context (batch 2) created, rocalGetStatus ROCAL_OK, released"
    )
    assert "tensor contractions not exercised" in res["features.rocm.hiptensor"]["message"]
    assert (
        "1.4.0" in res["features.rocm.hiptensor"]["message"]
    )  # the header's version still reported
    # header-only libraries have nothing to call
    for name in ("rocthrust", "rocwmma"):
        r = res["features.rocm." + name]
        if r["status"] != "unsupported":
            assert r["status"] == "partial" and "header-only" in r["message"], r["message"]
    assert all(r["status"] != "pass" for r in res.values()), {
        c: r["status"] for c, r in res.items()
    }


@pytest.mark.docker
def test_unloadable_wrong_or_missing_entry_points(tmp_path):
    root = tree(
        tmp_path,
        {
            "libhiptensor.so.1": HIPTENSOR_1,
            "librocdecode.so.0": None,
            "librpp.so.2.0.0": RPP_2,
            "libopenvx.so.1": OPENVX,
            "librocal.so.2": ROCAL_BROKEN,
        },
    )
    res = probe_in_fake_rocm(tmp_path, root)
    tensor = res["features.rocm.hiptensor"]  # hipTensor 1.x: its header has no C linkage
    assert tensor["status"] == "partial" and "present, not exercised" in tensor["message"]
    assert (
        "no hiptensorGetVersion" in tensor["message"] and tensor["metrics"]["proven"] == "presence"
    )
    decode = res["features.rocm.rocdecode"]  # installed, and the dynamic loader refuses it
    assert decode["status"] == "fail" and "cannot be loaded" in decode["message"], decode["message"]
    assert "librocdecode.so.0" in decode["message"]
    rpp = res["features.rocm.rpp"]  # RPP 2.x's rppCreate, with a batch size read back wrong
    assert (
        rpp["status"] == "fail"
        and "rppGetBatchSize returned status 0, batch 4 (created with 3)" in rpp["message"]
    )
    rocal = res["features.rocm.rocal"]
    assert rocal["status"] == "fail" and "rocalGetStatus returned 3" in rocal["message"], rocal[
        "message"
    ]
    assert res["features.rocm.mivisionx"]["status"] == "partial"


def test_rpp_2_host_handle_through_ctypes(tmp_path):
    """Without Docker: RPP 2.x's rppCreate(handle, batch, threads, stream, RPP_HOST_BACKEND) path."""
    import ctypes

    from valorch_probe.checks import _rocm_host

    lib_dir = tmp_path / "lib"
    lib_dir.mkdir()
    build(lib_dir, "librpp.so.2", RPP_2.replace("->batch + 1;", "->batch;"))
    lib, path, error = _rocm_host.load([str(lib_dir / "librpp.so.2")], "librpp.so")
    assert error == "" and path.endswith("librpp.so.2")
    assert (
        _rocm_host.rpp(lib)
        == "rppCreate: a host handle (batch 3) created, rppGetBatchSize read 3 back, destroyed"
    )
    with pytest.raises(_rocm_host.NoEntryPointError):
        build(lib_dir, "libhiptensor.so.1", HIPTENSOR_1)
        _rocm_host.hiptensor(ctypes.CDLL(str(lib_dir / "libhiptensor.so.1")))
