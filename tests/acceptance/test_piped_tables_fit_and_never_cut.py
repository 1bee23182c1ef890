"""Tables written to a pipe or a file take a readable width (``COLUMNS`` when set, else
120) and never cut a value: values wrap between words, and a table whose words cannot fit
becomes one record per block. Only a line holding one word longer than the width is wider."""

import json

import pytest
from root_helpers import run_cli


def _aliases():
    proc = run_cli("images", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    return [image["alias"] for image in json.loads(proc.stdout)]


def _over(line: str, width: int) -> bool:
    """A line wider than ``width`` that is not one unbreakable value (after its header)."""
    value = line.strip().strip("│┃").split(": ", 1)[-1]
    return len(line) > width and len(value.split()) != 1


@pytest.mark.parametrize(("columns", "width"), [("", 120), ("100", 100), ("40", 40)])
def test_images_list_piped_fits_width_and_keeps_every_alias(columns, width):
    proc = run_cli("images", "list", env={"COLUMNS": columns})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [line for line in lines if _over(line, width)] == []
    assert "…" not in proc.stdout
    words = proc.stdout.split()
    for alias in _aliases():
        assert alias in words, alias


def test_wide_columns_setting_keeps_the_table():
    proc = run_cli("images", "list", env={"COLUMNS": "400"})
    assert proc.returncode == 0, proc.stderr
    assert "┃ alias" in proc.stdout
    assert max(len(line) for line in proc.stdout.splitlines()) <= 400
