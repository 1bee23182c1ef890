"""scripts/style-metrics.py: the before/after figures of the house style, on any checkout."""

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "style-metrics.py"


def _tree(root: Path) -> Path:
    pkg = root / "orchestrator"
    pkg.mkdir(parents=True)
    (root / "valorch_probe").mkdir()
    (pkg / "core.py").write_text(
        "from typing import Any\n"
        "import typing\n"
        "\n"
        "def f(a: Any, b: dict[str, Any], c: 'Any') -> typing.Any:  # noqa: ANN401\n"
        "    x: list[Any] = []\n"
        "    return cast(Any, x)\n"
        "\n"
        "def g(y: int) -> int:\n"
        "    z = 1\n"
        "    z += 1\n"
        "    return y + z  # " + "x" * 100 + "\n"
    )
    (root / "valorch_probe" / "inside.py").write_text(
        "from typing import Any\n\ndef p(v: Any) -> Any:  # noqa: ANN401\n    return v\n"
    )
    return root


def test_counts_any_in_annotations_outside_the_probe(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(_tree(tmp_path)), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    m = json.loads(done.stdout)
    # a, b's value, the string 'Any', the return, x's element: five in annotations (the cast's
    # Any and the import are names, not annotations); the probe's two are not counted
    assert m["any_annotations"] == 5
    assert m["any_bare"] == 3  # a, 'Any' and -> typing.Any
    assert m["any_names"] == 5  # the four written out in annotations, and the cast's
    assert m["longest_function"] == "orchestrator/core.py:g"
    assert m["longest_function_lines"] == 4
    assert m["lines_over_100"] == 1
    assert m["noqa_markers"] == 2  # the probe's marker counts: markers are counted everywhere


def test_table_and_a_checkout_that_is_not_one(tmp_path: Path) -> None:
    table = subprocess.run(
        [sys.executable, str(SCRIPT), str(_tree(tmp_path / "ok"))],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Any in annotations (outside the probe)  5" in table
    bad = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "nothing")], capture_output=True, text=True
    )
    assert bad.returncode != 0 and "not a directory" in bad.stderr
