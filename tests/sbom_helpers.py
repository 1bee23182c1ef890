"""What the tests ask of a CycloneDX BOM beyond the product's ``bom_json``."""

from __future__ import annotations

import json
from typing import Any


def validate(text: str) -> str | None:
    """None when ``text`` validates against the CycloneDX 1.5 JSON schema the library ships,
    else the first error."""
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    error = JsonStrictValidator(SchemaVersion.V1_5).validate_str(text)
    return None if error is None else str(error)


def bom(inventory: Any, image_ref: str, **kw: Any) -> dict[str, Any]:
    from orchestrator.ext.sbom.render import bom_json

    return json.loads(bom_json(inventory, image_ref, **kw))
