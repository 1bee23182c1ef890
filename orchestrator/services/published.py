"""An audited image against the vendors' published claims: ROCm's release table (the
library versions a ROCm release ships) and PyTorch's release matrix (the PyTorch, Python,
CUDA and ROCm combinations PyTorch publishes). Informative: the catalog's expectations
decide the audit's exit status, these findings are shown beside them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..catalog import releases
from ..components import Inventory
from ..errors import InputError
from ..spec import ImageSpec
from .catalog import load_releases


@dataclass(frozen=True)
class Claims:
    """What the release tables say of one image."""

    table: str | None  # the release table file, when there is one
    release: str | None  # the ROCm release compared with
    findings: tuple[releases.Published, ...]
    note: str = ""

    def count(self, kind: str) -> int:
        return sum(f.kind == kind for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "rocm_release": self.release,
            "note": self.note,
            "counts": {k: self.count(k) for k in ("agrees", "drift", "lacking", "unpublished")},
            "findings": [f.as_dict() for f in self.findings],
        }


def compare(
    inv: Inventory, image: ImageSpec, table_path: Path, release: str | None = None
) -> Claims:
    """The image's measured versions against the release table at ``table_path`` (none
    there: no claims). ``release`` names the ROCm release; by default the one the image
    measures, else the one its catalog entry expects."""
    if not table_path.exists():
        if release:
            raise InputError(
                f"--release {release}: no release table at {table_path}",
                "valorch images import-releases compatibility-matrix-historical-6.0.csv",
            )
        return Claims(None, None, ())
    doc = load_releases(table_path)
    rocm, found, note, chosen = doc.get("rocm"), [], "", None
    if rocm:
        measured = inv.get("rocm")
        wanted = release or (measured.value if measured else None) or image.components.get("rocm")
        chosen = releases.release_of(rocm, wanted)
        if release and chosen is None:
            shown = ", ".join(rocm.get("releases", [])[:12])
            raise InputError(
                f"--release {release}: not a release of {table_path} ({rocm.get('source')})",
                f"name one of: {shown}",
            )
        if chosen:
            found += releases.library_findings(rocm, chosen, inv)
        else:
            note = (
                f"ROCm {wanted} is not a release of the table"
                if wanted
                else "the image measures no ROCm release (name one with --release)"
            )
    if doc.get("pytorch"):
        found += releases.pytorch_findings(doc["pytorch"], inv)
    return Claims(str(table_path), chosen, tuple(found), note)
