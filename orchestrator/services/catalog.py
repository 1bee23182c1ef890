"""Catalog upkeep: plan the import of a published image components table, and of the
vendors' release tables kept beside the catalog (the command writes the files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import yamlio
from ..catalog import releases
from ..catalog.core import load_file
from ..catalog.rst_cells import Defs
from ..catalog.rst_import import Plan, RstImportError, plan_import
from ..errors import InputError

RELEASES_FILE = "releases.json"


def read_defs(path: Path) -> Defs:
    """Definitions of the docs' roles and substitutions: ROCm's historical compatibility CSV
    (what ``:version-ref:`` reads), a release table file (images/releases.json), or an RST
    file of ``.. |name| replace::`` and ``.. version-set::`` lines."""
    text = yamlio.read_text(path, "definitions file")
    try:
        if text.lstrip().startswith(releases.ROCM_FIRST_COLUMN):
            return releases.defs_of(releases.parse_rocm_csv(text, str(path)))
        if path.suffix == ".json":
            return releases.defs_of(json.loads(text).get("rocm") or {})
    except (releases.ReleaseTableError, ValueError, AttributeError) as exc:
        raise InputError(
            f"--defs {path}: {exc}", "pass ROCm's compatibility-matrix-historical CSV"
        ) from None
    return Defs(source=str(path)).with_page(text)


def plan_rst_import(file: Path, out_path: Path, defs_path: Path | None = None) -> Plan:
    """What importing ``file`` into the catalog file ``out_path`` changes (a Plan). The
    existing catalog file must load as a catalog file first (it is rewritten from it)."""
    text = yamlio.read_text(file, "reStructuredText page")
    defs = read_defs(defs_path) if defs_path is not None else None
    existing = None
    if out_path.exists():
        if out_path.is_dir():
            raise InputError(
                f"--out {out_path} is a directory", "name the catalog file, e.g. images/rocm.yaml"
            )
        existing = yamlio.read_text(out_path, "catalog file")
        load_file(out_path)
    try:
        return plan_import(text, existing, str(file), str(out_path), defs)
    except RstImportError as exc:
        moved = "rocm-install-on-linux" in str(exc)  # the page says where its tags moved
        raise InputError(
            str(exc),
            "import the install guide's page the message names; the catalog is left as it was"
            if moved
            else "fix the page at that line; the catalog is left as it was (the page needs a "
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


def load_releases(path: Path) -> dict[str, Any]:
    """The release table file ({"rocm": …, "pytorch": …}); {} when there is none."""
    if not path.exists():
        return {}
    text = yamlio.read_text(path, "release table")
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise InputError(
            f"{path}: not JSON ({exc})", "re-create it with valorch images import-releases"
        ) from None
    if not isinstance(doc, dict):
        raise InputError(f"{path}: not a release table", "re-create it with import-releases")
    return doc


def plan_releases_import(file: Path, out_path: Path) -> tuple[str, dict[str, Any]]:
    """(the release table file's new text, a summary): a CSV is ROCm's historical matrix, a
    Markdown file PyTorch's RELEASE.md; the other table in the file is kept."""
    if out_path.is_dir():
        raise InputError(
            f"--out {out_path} is a directory", "name the file, e.g. images/releases.json"
        )
    text = yamlio.read_text(file, "release table")
    try:
        if file.suffix.lower() == ".csv":
            key, table = "rocm", releases.parse_rocm_csv(text, str(file))
        elif file.suffix.lower() in (".md", ".markdown"):
            key, table = "pytorch", releases.parse_pytorch_release(text, str(file))
        else:
            raise releases.ReleaseTableError(
                f"{file}:1: unknown kind of file: expected ROCm's compatibility-matrix-historical"
                " .csv or PyTorch's RELEASE.md"
            )
    except releases.ReleaseTableError as exc:
        raise InputError(str(exc), "the file is read as published; nothing was written") from None
    doc = load_releases(out_path)
    doc[key] = {**table, "source": file.name}
    summary = (
        {"kind": key, "releases": len(table["releases"]), "rows": len(table["libraries"])}
        if key == "rocm"
        else {"kind": key, "rows": len(table["rows"])}
    )
    return json.dumps(doc, indent=1, sort_keys=True) + "\n", summary


def validate_releases(path: Path) -> None:
    load_releases(path)
