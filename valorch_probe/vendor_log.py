"""Which library ran a convolution or a GEMM, from the libraries' own logs, where kernel
names cannot tell (evidence.KERNEL_LIBRARIES):

- MIOpen runs Composable Kernel instances, rocBLAS / hipBLASLt GEMMs and its own kernels
  for one convolution, so a conv's kernel names may name CK or Tensile. With
  ``MIOPEN_ENABLE_LOGGING_CMD=1`` MIOpen prints, per call it serves, the MIOpenDriver
  command that repeats it: ``MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver
  convfp16 -n 2 -c 16 ...`` (``LogCmdFindConvolution``, ``LogCmdFusion`` likewise), behind
  any prefix its logger writes (``_MIOPEN_PREFIX``).
- cuBLAS runs cuBLASLt's kernels, so their kernel names are shared. cuBLASLt's log
  (``CUBLASLT_LOG_LEVEL=2``, level 2 "Trace": the calls that launch kernels) writes
  ``[cublasLt][pid][Trace][cublasLtMatmul] A=...`` for a matmul asked of cuBLASLt itself,
  and ``[cublasLt][pid][Trace][cublasLtSSSMatmul] ...`` (a typed entry: SSS, HSH, TST, ...)
  for a GEMM that came in through cuBLAS's API (a torch.matmul captured that way,
  tests/fixtures/vendor-logs/README.md). cuBLAS's own log (``CUBLAS_LOGINFO_DBG=1``,
  ``CUBLAS_LOGDEST_DBG``) writes ``I! cuBLAS (v11.0) function cublasStatus_t
  cublasGemmEx(...) called:`` per call.

Container output is untrusted: at most MAX_BYTES are read, MAX_LINES lines, MAX_LINE
characters of each; a line counts only when it starts with the library's own prefix, so a
command echoed by a shell or quoted in other text is not a call. A library is named only
when one of its own lines was read."""

from __future__ import annotations

import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Dict, Iterator, List

MAX_BYTES = 4 << 20
MAX_LINES = 50000
MAX_LINE = 4096

# MIOpen's line prefix, every form its LoggingPrefix() writes (ROCm/MIOpen src/logger.cpp;
# ROCm/rocm-libraries projects/miopen/src/logger.cpp): with MIOPEN_ENABLE_LOGGING_MPMT the
# thread id, and in newer releases the host name before it, then "MIOpen", "(HIP)" or
# "(OpenCL)" where the build defines its backend (TheRock's builds write "MIOpen: "), with
# MIOPEN_ENABLE_LOGGING_ELAPSED_TIME the milliseconds (setw(8), three decimals), with
# MIOPEN_ENABLE_LOGGING_DATE_TIME " (2025-12-23T07:11:13.123Z)", then ": ". The thread id is
# required after a host name, so "echo MIOpen(HIP): ..." is not a prefix.
_MIOPEN_PREFIX = (
    r"(?:(?:[^\s:]{1,255} )?\d{1,10} )?MIOpen(?:\((?:HIP|OpenCL)\))?"
    r"(?: {0,8}-?\d{1,12}\.\d{3})?(?: \([0-9T:.Z-]{1,40}\))?: "
)
_MIOPEN_CMD = re.compile(
    _MIOPEN_PREFIX + r"Command \[(LogCmd\w{0,40})\] \S{0,200}MIOpenDriver\s+(\w{1,40})"
)
_MIOPEN_ANY = re.compile(_MIOPEN_PREFIX)
_CUBLASLT = re.compile(
    r"(?:\[[^\]\n]{0,40}\])?\[cublasLt\]\[\d{1,12}\]\[(\w{1,12})\]\[(cublasLt\w{0,80})\]"
)
_LT_TYPED = re.compile(r"cublasLt[A-Z][A-Z0-9]{1,5}Matmul")  # cublasLtSSSMatmul, cublasLtHSHMatmul
_CUBLAS = re.compile(r"I! cuBLAS \([^)\n]{0,24}\) function [^(\n]{0,80}?\b(cublas\w{1,80})\(")
_CUBLAS_COMPUTE = re.compile(r"gemm|gemv|matmul", re.I)


def _lines(text: str) -> Iterator[str]:
    """At most MAX_LINES lines of ``text``'s first MAX_BYTES, each cut at MAX_LINE."""
    for n, line in enumerate((text or "")[:MAX_BYTES].split("\n")):
        if n >= MAX_LINES:
            return
        yield line[:MAX_LINE].rstrip("\r")


def _counted(names: List[str]) -> str:
    """'LogCmdConvolution x3, LogCmdFindConvolution' (at most 8 distinct names)."""
    counts = sorted(collections.Counter(names).items())[:8]
    return ", ".join("%s x%d" % (k, v) if v > 1 else k for k, v in counts)


def miopen_facts(text: str) -> Dict[str, Any]:
    """What MIOpen's own log lines say: the driver commands it logged (a call it served)."""
    kinds, ops = [], []  # type: List[str], List[str]
    lines = 0
    for line in _lines(text):
        if "MIOpen" not in line[:300]:
            continue
        if _MIOPEN_ANY.match(line):
            lines += 1
        m = _MIOPEN_CMD.match(line)
        if m:
            kinds.append(m.group(1))
            ops.append(m.group(2))
    return {
        "miopen_lines": lines,
        "miopen_calls": len(kinds),
        "miopen_commands": _counted(kinds),
        "miopen_ops": ",".join(sorted(set(ops))[:8]),
    }


def cublas_facts(text: str) -> Dict[str, Any]:
    """What cuBLAS's and cuBLASLt's own log lines say: matmuls asked of cuBLASLt itself
    (``cublasLtMatmul``), GEMMs that came through cuBLAS (its typed cuBLASLt entries, or
    a GEMM function in cuBLAS's own log)."""
    direct, typed, cublas, compute = 0, [], [], []  # type: int, List[str], List[str], List[str]
    for line in _lines(text):
        m = _CUBLASLT.match(line)
        if m:
            level, func = m.group(1), m.group(2)
            if func == "cublasLtMatmul" and level in ("Trace", "Api"):
                direct += 1
            elif level == "Trace" and _LT_TYPED.fullmatch(func):
                typed.append(func)
            continue
        m = _CUBLAS.match(line)
        if m:
            cublas.append(m.group(1))
            if _CUBLAS_COMPUTE.search(m.group(1)):
                compute.append(m.group(1))
    return {
        "cublaslt_matmul_calls": direct,
        "cublaslt_typed_calls": _counted(typed),
        "cublas_functions": _counted(cublas),
        "cublas_gemm_calls": len(compute) + len(typed),
    }


def libraries_from_logs(text: str) -> Dict[str, Any]:
    """The libraries the logs in ``text`` show ran a call (``libraries``, empty when none
    did) and ``decided_by``: which log said so, for the result's evidence."""
    facts = miopen_facts(text)
    facts.update(cublas_facts(text))
    libs, said = [], []  # type: List[str], List[str]
    if facts["miopen_calls"]:
        libs.append("MIOpen")
        said.append("MIOpen's log (MIOPEN_ENABLE_LOGGING_CMD) logged %s" % facts["miopen_commands"])
    if facts["cublaslt_matmul_calls"]:
        libs.append("cuBLASLt")
        said.append(
            "cuBLASLt's log (CUBLASLT_LOG_LEVEL) traced cublasLtMatmul x%d"
            % facts["cublaslt_matmul_calls"]
        )
    if facts["cublas_gemm_calls"]:
        libs.append("cuBLAS")
        how = []
        if facts["cublas_functions"]:
            how.append("cuBLAS's log (CUBLAS_LOGINFO_DBG) logged %s" % facts["cublas_functions"])
        if facts["cublaslt_typed_calls"]:
            how.append(
                "cuBLASLt's log traced %s, the entry cuBLAS's GEMM API goes through"
                % facts["cublaslt_typed_calls"]
            )
        said.append("; ".join(how))
    facts["libraries"] = libs
    facts["decided_by"] = "; ".join(said)[:500]
    return facts


def log_env(directory: str) -> Dict[str, str]:
    """The variables that switch the libraries' logs on, writing into ``directory``
    (MIOpen writes its log to stderr)."""
    return {
        "MIOPEN_ENABLE_LOGGING_CMD": "1",
        "CUBLASLT_LOG_LEVEL": "2",
        "CUBLASLT_LOG_FILE": os.path.join(directory, "cublaslt.log"),
        "CUBLAS_LOGINFO_DBG": "1",
        "CUBLAS_LOGDEST_DBG": os.path.join(directory, "cublas.log"),
    }


def _read(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(MAX_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""


def served_by(script: str, timeout: float = 60.0) -> Dict[str, Any]:
    """Run ``script`` (one operation on the GPU) in a child interpreter with the libraries'
    logs on (they read the variables when a handle is created, so not in this process);
    what the logs show, and the child's exit status (-1: killed at ``timeout``, which stays
    under the probe's per-check deadline so the check still reports)."""
    tmp = tempfile.mkdtemp(prefix="valorch-vendorlog-")
    try:
        out = os.path.join(tmp, "output.log")
        with open(out, "wb") as sink:
            try:
                code = subprocess.run(
                    [sys.executable, "-c", script],
                    env=dict(os.environ, **log_env(tmp)),
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    timeout=timeout,
                ).returncode
            except subprocess.TimeoutExpired:
                code = -1
        texts = [_read(os.path.join(tmp, n)) for n in ("cublaslt.log", "cublas.log", "output.log")]
        facts = libraries_from_logs("\n".join(texts))
        facts["returncode"] = code
        return facts
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
