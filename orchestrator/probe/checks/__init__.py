"""Importing this package registers every suite and check."""

from . import smoke, selftest  # noqa: F401
