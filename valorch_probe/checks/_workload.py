"""Running an untrusted workload the way the command and pytest suites do: the outcomes it
can end in and the capped run itself. A helper module (it registers no check), so that the
pytest suite does not import ``command``, whose module declares the command suite."""

from __future__ import annotations

import os
from typing import Optional

from ..context import Outcome
from ._common import find_tool


class TimedOut(Outcome):
    status = "timeout"


class OutOfMemory(Outcome):
    """The kernel killed the workload at the container's memory limit."""

    status = "crash"


class HarnessError(Outcome):
    """The harness could not do its part: says nothing about the image."""

    status = "error"


def resolve(argv0: str) -> Optional[str]:
    if "/" in argv0:
        return argv0 if os.path.isfile(argv0) and os.access(argv0, os.X_OK) else None
    return find_tool(argv0)
