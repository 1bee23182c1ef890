"""Importing this package registers every suite and check."""

from . import smoke, selftest  # noqa: F401
from . import kernels, features, features_dtypes  # noqa: F401
