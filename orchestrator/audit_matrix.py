"""The components table of the compatibility matrix, from measured inventories.

Pure: the matrix renderer calls ``components_table`` with the catalog's images
and the latest stored inventory of each (``store.inventory_queries.latest_inventory``)
and renders each cell as the expected value, plus what was found when it differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from .audit import Inventory, compare, resolve
from .spec import ImageSpec


@dataclass(frozen=True)
class ComponentCell:
    expected: str | None  # what the catalog pins ("master" = unpinned); None when it pins nothing
    found: str | None  # what the inventory says; None when not measured or absent
    agrees: bool | None  # None: not measured (no inventory) or nothing expected
    verdict: str  # ok | drift | missing | unpinned | unmeasured | unexpected


@dataclass(frozen=True)
class ComponentsRow:
    alias: str
    reference: str
    digest: str | None
    measured: bool
    cells: dict[str, ComponentCell]

    @property
    def agrees(self) -> bool | None:
        """False when any cell disagrees; None when not measured."""
        if not self.measured:
            return None
        return all(c.agrees is not False for c in self.cells.values())


def component_columns(images: Iterable[ImageSpec]) -> list[str]:
    """Every component any image pins, in first-seen catalog order."""
    cols: list[str] = []
    for image in images:
        cols.extend(k for k in image.components if k not in cols)
    return cols


def components_table(catalog_images: Iterable[ImageSpec],
                     inventories_by_alias: Mapping[str, Inventory]) -> list[ComponentsRow]:
    """One row per catalog image, one cell per component column: expected vs found."""
    images = list(catalog_images)
    columns = component_columns(images)
    rows: list[ComponentsRow] = []
    for image in images:
        inv = inventories_by_alias.get(image.alias)
        findings = {f.component: f for f in compare(inv, dict(image.components), build=False)} if inv else {}
        cells: dict[str, ComponentCell] = {}
        for col in columns:
            want = image.components.get(col)
            if inv is None:
                cells[col] = ComponentCell(want, None, None, "unmeasured")
            elif want is None:
                comp = resolve(inv, col)
                cells[col] = ComponentCell(None, comp.value if comp else None, None, "unexpected")
            else:
                f = findings[col]
                cells[col] = ComponentCell(want, f.found, f.kind in ("ok", "unpinned"), f.kind)
        rows.append(ComponentsRow(image.alias, image.reference, image.digest, inv is not None, cells))
    return rows
