"""A host's class, the unit the evidence, the triage and the readiness compare hosts by:
``cpu``, or its GPU vendors and architectures."""

from __future__ import annotations

from typing import Any


def host_class(spec: dict[str, Any]) -> str:
    """``cpu``, or the host's GPU vendors and architectures (``amd:gfx942``)."""
    gpus = sorted(
        {
            f"{g.get('vendor')}:{g.get('arch')}"
            for g in (spec or {}).get("gpus") or ()
            if isinstance(g, dict)
        }
    )
    return "+".join(gpus) or "cpu"
