"""JUnit classnames keep the image's name in one piece where Jenkins reads them: Jenkins
splits a classname at each dot into packages and a class, so an alias's own dots
("py3.11") become "_" in the classname of ``run --junit`` and ``diff --format junit``; the
testsuite and testcase names keep the alias and the check id as they are."""

import json
import xml.etree.ElementTree as ET

import pytest
from root_helpers import run_cli

pytestmark = pytest.mark.docker

ALIAS = "cpu_debian12_py3.11_base"


def test_classnames_split_only_where_valorch_separates(tmp_path):
    catalog = tmp_path / "images"
    catalog.mkdir()
    (catalog / "x.yaml").write_text(
        "family: x\nbackend: cpu\nimages:\n"
        f"  - alias: {ALIAS}\n    reference: valorch/base:bookworm\n    local: true\n"
    )
    db = tmp_path / "v.sqlite"
    junit = tmp_path / "run.xml"
    runs = []
    for checks in (["selftest.pass"], ["selftest.pass", "selftest.noise"]):
        argv = ["run", "--image", ALIAS, "--catalog", str(catalog), "--suite", "selftest"]
        for c in checks:
            argv += ["--check", c]
        done = run_cli(*argv, "--junit", str(junit), "--no-matrix", "--json", db=db)
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout)[0]["run"])
    root = ET.parse(junit).getroot()
    assert root.find("testsuite").get("name") == ALIAS
    classes = {c.get("classname") for c in root.iter("testcase")}
    assert classes == {"cpu_debian12_py3_11_base.selftest"}, classes
    assert {c.get("name") for c in root.iter("testcase")} >= {"selftest.pass", "selftest.noise"}
    diffed = run_cli("diff", runs[0], runs[1], "--format", "junit", db=db)
    cases = list(ET.fromstring(diffed.stdout).iter("testcase"))
    assert cases and all("." not in c.get("classname") for c in cases), diffed.stdout
