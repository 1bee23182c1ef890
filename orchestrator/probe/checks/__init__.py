"""Importing this package registers every suite and check.

The order of these imports is the order checks register in, and so the order a suite runs
its checks in and the order ``docs/checks.md`` and ``valorch`` list them: the cheap facts
first (smoke, the harness self-test), then kernels, features, compile, profiler, the other
frameworks, job-declared checks and the multi-node suite. The formatter must not sort them.
"""

# ruff: noqa: I001 (the order is meaning, see above)
from . import smoke, selftest  # noqa: F401 (imported to register, as are all below)
from . import kernels, kernels_dist  # noqa: F401
from . import features, features_dtypes, features_cuda, features_gpu_rows  # noqa: F401
from . import features_backends, features_ecosystem, features_domains  # noqa: F401
from . import features_rocm_libs  # noqa: F401
from . import compile  # noqa: F401
from . import profiler, profiler_tools  # noqa: F401
from . import tensorflow  # noqa: F401
from . import command, pytest_workload  # noqa: F401
from . import multinode  # noqa: F401
