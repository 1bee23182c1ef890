"""docs/checks.md is generated from the probe's registry; it must say what the registry
holds, in the order checks register (and run) in. A formatter that once sorted the
registering imports reordered every suite without a test noticing."""

import subprocess
import sys

from conftest import ROOT


def test_docs_checks_md_is_what_the_generator_writes():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen-checks-doc.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_suites_register_in_their_documented_order():
    import valorch_probe.checks  # noqa: F401 (registers every check)
    from valorch_probe.registry import CHECKS

    suites = list(dict.fromkeys(c.suite for c in CHECKS.values()))
    assert suites[:4] == ["smoke", "selftest", "kernels", "features"], suites
