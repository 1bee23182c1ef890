"""Importing this package registers every suite and check."""

from . import smoke, selftest  # noqa: F401
from . import kernels  # noqa: F401
from . import features, features_dtypes, features_cuda, features_backends, features_ecosystem  # noqa: F401
from . import compile  # noqa: F401
from . import profiler  # noqa: F401
from . import tensorflow  # noqa: F401
from . import command, pytest_workload  # noqa: F401
