"""Importing this package registers every suite and check."""

from . import smoke, selftest  # noqa: F401
from . import kernels, kernels_dist  # noqa: F401
from . import features, features_dtypes, features_cuda, features_gpu_rows, features_backends  # noqa: F401
from . import features_ecosystem, features_domains, features_rocm_libs  # noqa: F401
from . import compile  # noqa: F401
from . import profiler, profiler_tools  # noqa: F401
from . import tensorflow  # noqa: F401
from . import command, pytest_workload  # noqa: F401
from . import multinode  # noqa: F401
