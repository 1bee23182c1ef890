"""Importing this package registers every suite and check."""

from . import (  # noqa: F401 (imported for their registrations, not their names)
    command,
    compile,
    features,
    features_backends,
    features_cuda,
    features_domains,
    features_dtypes,
    features_ecosystem,
    features_gpu_rows,
    features_rocm_libs,
    kernels,
    kernels_dist,
    multinode,
    profiler,
    profiler_tools,
    pytest_workload,
    selftest,
    smoke,
    tensorflow,
)
