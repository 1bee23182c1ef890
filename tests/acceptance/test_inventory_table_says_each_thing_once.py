"""The inventory audit's terminal table says each thing once: the title names an image by
alias and, only when it differs, its reference ("host", never "host  host"); a component
that is installed but does not import is one row, broken, not a second "ok" row for its
version."""

import pytest

pytestmark = pytest.mark.docker

BROKEN = "cpu_debian12_py3.11_pytorch_1.13_broken_torchvision"


def test_host_title_names_it_once(cli):
    done = cli("inventory", "audit", "--image", "host", env={"COLUMNS": "200"})
    assert done.returncode in (0, 1), done.stderr
    title = done.stdout.strip().splitlines()[0].strip()
    assert title == "host", title


def test_a_broken_component_is_one_row(cli):
    done = cli("inventory", "audit", "--image", BROKEN, env={"COLUMNS": "250"})
    rows = [line for line in done.stdout.splitlines() if line.startswith("│ torchvision ")]
    assert len(rows) == 1, done.stdout
    assert "installed but does not import" in rows[0] and "0.14" in rows[0]
