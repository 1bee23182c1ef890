"""``valorch diff BASE HEAD --pair 'rel1_*=rel2_*'`` compares each image with its successor:
without the rule the two releases' images never meet (each is only removed or added, no
regression found); with it, a check that passed in the base image and fails in its
successor is REGRESSED (exit 1). Real runs of the local test images."""

import json

import pytest

pytestmark = pytest.mark.docker

CATALOG = """family: releases
backend: cpu
local: true
images:
  - alias: rel1_debian12_torch
    reference: valorch/test:debian-torch
    components: {debian: "12", python: "3.11", pytorch: "1.13"}
  - alias: rel2_debian12_torch
    reference: valorch/test:pip-torch
    components: {debian: "12", python: "3.11", pytorch: "1.13"}
  - alias: rel1_debian12_base
    reference: valorch/base:bookworm
    components: {debian: "12", python: "3.11"}
  - alias: rel2_debian12_base
    reference: valorch/base:bookworm
    components: {debian: "12", python: "3.11"}
"""


@pytest.fixture
def releases(cli, tmp_path):
    catalog = tmp_path / "images"
    catalog.mkdir()
    (catalog / "releases.yaml").write_text(CATALOG)
    batches = []
    for release in ("rel1", "rel2"):  # two images per release: aliases alone never pair them
        done = cli(
            "run",
            "--image",
            f"{release}_debian12_torch",
            "--image",
            f"{release}_debian12_base",
            "--suite",
            "smoke",
            "--check",
            "env.version.pytorch",
            "--check",
            "env.version.python",
            "--catalog",
            str(catalog),
            "--pull",
            "never",
            "--no-gate",
            "--no-matrix",
            "--json",
        )
        assert done.returncode == 0, done.stderr[-2000:]
        batches.append(json.loads(done.stdout)[0]["batch"])
    return batches


def test_pairing_finds_the_regression_that_aliases_hide(cli, releases):
    base, head = releases
    unpaired = cli("diff", base, head, "--json")
    # unpaired, the failing head check is red (the gate fails on it) but nothing compares with it:
    # no regression is found
    assert unpaired.returncode in (0, 1), unpaired.stderr[-2000:]
    assert not [c for c in json.loads(unpaired.stdout)["changes"] if c["kind"] == "regressed"]
    paired = cli("diff", base, head, "--pair", "rel1_*=rel2_*", "--json")
    assert paired.returncode == 1, paired.stderr[-2000:]
    assert "paired rel1_debian12_torch (base) with rel2_debian12_torch (head)" in paired.stderr
    assert "paired rel1_debian12_base (base) with rel2_debian12_base (head)" in paired.stderr
    report = json.loads(paired.stdout)
    regressed = [c for c in report["changes"] if c["base"] == "pass" and c["head"] == "fail"]
    assert [(c["environment"], c["check"]) for c in regressed] == [
        ("rel1_debian12_torch → rel2_debian12_torch", "env.version.pytorch")
    ]
    md = cli("diff", base, head, "--pair", "rel1_*=rel2_*", "--format", "md")
    # the verdict states the count that decided it (no separate REGRESSED word to contradict it)
    assert md.returncode == 1 and "**1 failing (1 regressed)** (exit 1)" in md.stdout
    assert "`env.version.pytorch`" in md.stdout


def test_bad_pair_rule_is_exit_2(cli, releases):
    base, head = releases
    for bad in ("rel1_*", "rel1_*=rel2_", "rel1_*=", "rel1 *=rel2 *"):
        proc = cli("diff", base, head, "--pair", bad)
        assert (
            proc.returncode == 2 and "--pair" in proc.stderr and "Traceback" not in proc.stderr
        ), (bad, proc.stderr)
