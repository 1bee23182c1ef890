"""Which ROCm BLAS library served a GEMM: rocBLAS and hipBLASLt both run Tensile kernels
named ``Cijk_...``, so a kernel name cannot tell them apart (evidence.py). Their own logs
can: rocBLAS's bench log (``ROCBLAS_LAYER=2``, ``ROCBLAS_LOG_BENCH_PATH``) writes one
``rocblas-bench -f gemm_ex ...`` command per call, hipBLASLt's (``HIPBLASLT_LOG_MASK=32``,
``HIPBLASLT_LOG_FILE``) one ``hipblaslt-bench [--api_method c] ...`` command per matmul
(rocBLAS docs, "Logging"; ROCm/rocm-libraries projects/hipblaslt/docs/how-to/
how-to-use-hipblaslt-offline-tuning.rst). Both libraries read these variables when a
handle is created, so the GEMM runs in a child interpreter with the logging set, and
without a ``HIPBLASLT_LOG_LEVEL`` the image sets (it would switch the bench log off)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Dict

from . import read_text

_ROCBLAS = re.compile(r"^\S*rocblas-bench\s+-f\s+(\S+)", re.M)
# a bench line is the command itself, with --api_method (written since the option exists) or
# without it (hipblaslt-bench's default API): the command's name, then its first option
_HIPBLASLT = re.compile(r"^\S*hipblaslt-bench\s+--?[A-Za-z]", re.M)
#: set, it replaces HIPBLASLT_LOG_MASK, and no level includes the bench log (ROCm/hipBLASLt,
#: rocblaslt's logging header, LoggerSingleton): the child runs without it
LEVEL = "HIPBLASLT_LOG_LEVEL"


def libraries_from_logs(rocblas_log: str, hipblaslt_log: str) -> Dict[str, Any]:
    """The libraries whose bench logs recorded a call: hipBLASLt first (a matmul torch
    routed to it), then rocBLAS, with the functions rocBLAS logged."""
    rb = _ROCBLAS.findall(rocblas_log or "")
    lt = _HIPBLASLT.findall(hipblaslt_log or "")
    libs = (["hipBLASLt"] if lt else []) + (["rocBLAS"] if rb else [])
    return {
        "libraries": libs,
        "hipblaslt_calls": len(lt),
        "rocblas_calls": len(rb),
        "rocblas_functions": ",".join(sorted(set(rb))),
    }


def log_env(directory: str) -> Dict[str, str]:
    return {
        "ROCBLAS_LAYER": "2",
        "ROCBLAS_LOG_BENCH_PATH": os.path.join(directory, "rocblas-bench.log"),
        "HIPBLASLT_LOG_MASK": "32",
        "HIPBLASLT_LOG_FILE": os.path.join(directory, "hipblaslt-bench.log"),
    }


def served_by(script: str, timeout: float = 120.0) -> Dict[str, Any]:
    """Run ``script`` (a GEMM on the GPU) in a child interpreter with both libraries'
    bench logs on; what the logs show (``libraries`` empty: neither logged a call)."""
    tmp = tempfile.mkdtemp(prefix="valorch-blaslog-")
    try:
        env = dict(os.environ, **log_env(tmp))
        level = env.pop(LEVEL, None)
        proc = subprocess.run(
            [sys.executable, "-c", script],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout,
        )
        output = proc.stdout.decode("utf-8", "replace")
        logs = [
            read_text(os.path.join(tmp, name), 1 << 20)
            for name in ("rocblas-bench.log", "hipblaslt-bench.log")
        ]
        # without a file the libraries log to stderr, which is in ``output``
        facts = libraries_from_logs(logs[0] + "\n" + output, logs[1] + "\n" + output)
        facts["returncode"] = proc.returncode
        if level is not None:  # said, since the image's own setting was overridden for the child
            facts["hipblaslt_log_level_unset"] = level[:40]
        return facts
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
