"""Every command's --help writes values alike: a required argument is NAME in the usage
line (not typer's {NAME}), paths are <path> (never <Path>), and an option that takes one of
a few words lists them (<md|rst|html|json>), not <str>."""

import re

import pytest
from root_helpers import run_cli

COMMANDS = [
    ["run"],
    ["diff"],
    ["baseline", "set"],
    ["images", "pull"],
    ["results", "show"],
    ["matrix", "render"],
    ["inventory", "audit"],
]
CHOICES = {
    ("run",): {"--pull": "<missing|always|never>"},
    ("diff",): {"--format": "<term|md|html|json|junit>"},
    ("images", "pull"): {"--pull": "<missing|always>"},
    ("matrix", "render"): {
        "--format": "<md|rst|html|json>",
        "--rows": "<features|checks>",
        "--columns": "<images|backends|hosts>",
    },
}


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_usage_and_types_read_alike(argv):
    text = run_cli(*argv, "--help", env={"COLUMNS": "200"}).stdout
    usage = next(line for line in text.splitlines() if "Usage:" in line)
    assert "{" not in usage, usage
    assert "<Path>" not in text
    for option, metavar in CHOICES.get(tuple(argv), {}).items():
        line = next(line for line in text.splitlines() if re.search(rf"\s{option}\s", line))
        assert metavar in line, line
