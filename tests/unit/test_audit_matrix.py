"""The components table of the matrix from measured inventories (pure)."""

from __future__ import annotations

from orchestrator import audit
from orchestrator.audit_matrix import component_columns, components_table
from orchestrator.spec import ImageSpec


def inv(**values: str) -> audit.Inventory:
    return audit.Inventory(components=tuple(audit.Component(name=k.replace("__", ":"), value=v, source="file",
                                                            evidence="/x") for k, v in values.items()))


IMAGES = [
    ImageSpec(alias="a", reference="r/a:1", backend="rocm",
              components={"rocm": "6.3", "pytorch": "2.4.0", "magma": "master", "ucx": "1.10.0"}),
    ImageSpec(alias="b", reference="r/b:1", backend="cpu", components={"pytorch": "2.13.0", "debian": "12"}),
    ImageSpec(alias="c", reference="r/c:1", backend="cpu", components={"python": "3.11"}),
]


def test_columns_in_catalog_order():
    assert component_columns(IMAGES) == ["rocm", "pytorch", "magma", "ucx", "debian", "python"]


def test_cells_expected_found_agrees():
    rows = components_table(IMAGES, {
        "a": inv(rocm="6.3.0", pytorch="2.4.0+rocm6.3", magma="2.9.0", python="3.12.8"),  # ucx missing
        "b": inv(pytorch="2.4.1", debian="12.7"),
    })
    a, b, c = rows
    assert a.measured and a.cells["rocm"].agrees is True and a.cells["rocm"].found == "6.3.0"
    assert a.cells["magma"].verdict == "unpinned" and a.cells["magma"].agrees is True
    assert a.cells["ucx"].verdict == "missing" and a.cells["ucx"].agrees is False and a.cells["ucx"].found is None
    assert a.cells["python"].expected is None and a.cells["python"].found == "3.12.8"
    assert a.cells["python"].agrees is None and a.cells["python"].verdict == "unexpected"
    assert a.agrees is False
    assert b.cells["pytorch"].expected == "2.13.0" and b.cells["pytorch"].found == "2.4.1"
    assert b.cells["pytorch"].agrees is False and b.cells["debian"].agrees is True
    assert not c.measured and c.agrees is None
    assert c.cells["python"].verdict == "unmeasured" and c.cells["python"].expected == "3.11"
    assert set(c.cells) == set(a.cells)


def test_all_agree():
    rows = components_table(IMAGES[1:2], {"b": inv(pytorch="2.13.0+cpu", debian="12.15", pip__torch="2.13.0")})
    assert rows[0].agrees is True
