"""Importing this package registers every suite and check.

The order of these imports is the order checks register in, and so the order a suite runs
its checks in and the order ``docs/checks.md`` and ``valorch`` list them: the cheap facts
first (smoke, the harness self-test), then kernels, features, compile, profiler, the other
frameworks, job-declared checks and the multi-node suite. The import sorter must not sort
them (tests/unit/test_checks_doc_is_current.py keeps the order).
"""

# isort: skip_file
from . import (  # noqa: F401 (imported for their registrations, not their names)
    smoke,
    selftest,
    kernels,
    kernels_dist,
    features,
    features_dtypes,
    features_cuda,
    features_gpu_rows,
    features_backends,
    features_ecosystem,
    features_domains,
    features_rocm_libs,
    compile,
    profiler,
    profiler_tools,
    tensorflow,
    command,
    pytest_workload,
    multinode,
)
