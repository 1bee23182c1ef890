"""Catalog upkeep: plan the import of a published image components table (the command
writes the file)."""

from __future__ import annotations

from pathlib import Path

from ..catalog.rst_import import ImportError_, Plan, plan_import
from ..errors import InputError


def plan_rst_import(file: Path, out_path: Path) -> Plan:
    """What importing ``file`` into the catalog file ``out_path`` changes (a Plan)."""
    try:
        text = file.read_text(encoding="utf-8")
        existing = out_path.read_text(encoding="utf-8") if out_path.exists() else None
        return plan_import(text, existing, str(file), str(out_path))
    except OSError as exc:
        raise InputError(f"cannot read {exc.filename}: {exc.strerror}", "check the path") from None
    except ImportError_ as exc:
        raise InputError(str(exc), "the page needs a list-table whose first header is Docker/Image/Tag") from None
