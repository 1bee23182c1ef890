"""A tiny upstream-style test file shipped with jobs/commands-example.yaml.

It needs nothing but the standard library (and pytest in the image)."""

import json
import sys

import pytest


def test_python_is_3():
    assert sys.version_info[0] == 3


@pytest.mark.parametrize("value", [1, "two", [3]])
def test_json_round_trip(value):
    assert json.loads(json.dumps(value)) == value


@pytest.mark.skipif(sys.platform != "win32", reason="windows only")
def test_windows_paths():
    assert "\\" in __file__


@pytest.mark.xfail(reason="upstream marks this as a known failure", strict=False)
def test_known_failure():
    assert 0.1 + 0.2 == 0.3
