"""Catalog upkeep: plan the import of a published image components table (the command
writes the file)."""

from __future__ import annotations

from pathlib import Path

from .. import yamlio
from ..catalog.core import load_file
from ..catalog.rst_import import Plan, RstImportError, plan_import
from ..errors import InputError


def plan_rst_import(file: Path, out_path: Path) -> Plan:
    """What importing ``file`` into the catalog file ``out_path`` changes (a Plan). The
    existing catalog file must load as a catalog file first (it is rewritten from it)."""
    text = yamlio.read_text(file, "reStructuredText page")
    existing = None
    if out_path.exists():
        if out_path.is_dir():
            raise InputError(
                f"--out {out_path} is a directory", "name the catalog file, e.g. images/rocm.yaml"
            )
        existing = yamlio.read_text(out_path, "catalog file")
        load_file(out_path)
    try:
        return plan_import(text, existing, str(file), str(out_path))
    except RstImportError as exc:
        raise InputError(
            str(exc),
            "fix the page at that line; the catalog is left as it was (the page needs a "
            "list-table whose first header is Docker/Image/Tag)",
        ) from None


def validate_written(path: Path) -> None:
    """The file about to replace a catalog file loads as a catalog file (else exit 2, nothing replaced)."""
    try:
        load_file(path)
    except InputError as exc:
        raise InputError(
            f"the imported catalog would not load, nothing written: {exc.message}",
            "report this with the page that was imported",
        ) from None
