"""The errors a user can meet, each with its exit code and what to do next.

Inside the pipeline failures are data (a ``CheckResult`` with status
``error``); these exceptions are raised only where the pipeline cannot go on
and are turned into a message and an exit code by the CLI, never a traceback.
"""

from __future__ import annotations


class ValorchError(Exception):
    """Base class: ``exit_code`` and a message that says what to do next."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class InputError(ValorchError):
    """Bad input: a spec, flag, file or unknown name (exit 2)."""

    exit_code = 2


class SpecError(InputError):
    """A YAML spec that does not validate; the message names file, line and key."""


class UnknownImageError(InputError):
    """An image alias or reference that is not in the catalog and cannot be parsed."""


class AmbiguousImageError(InputError):
    """An alias that matches more than one catalogued image."""


class InfrastructureError(ValorchError):
    """The engine, a host or the database failed (exit 3)."""

    exit_code = 3


class NoMatchingHostError(InfrastructureError):
    """No host has the hardware an image needs."""
