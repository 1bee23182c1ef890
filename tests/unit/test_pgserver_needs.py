"""tests/pgserver.py says what is missing at once, before it starts anything: a missing
psycopg is a skip with the way to install it, never a minute of waiting for a server."""

import json
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

# psycopg made unimportable (None in sys.modules makes `import psycopg` raise ImportError),
# then a start in an empty directory: the reason and what the directory holds afterwards.
SCRIPT = """
import json, os, sys
sys.modules["psycopg"] = None
sys.path.insert(0, sys.argv[1])
import pgserver
try:
    pgserver.start(base=sys.argv[2])
    print(json.dumps({"started": True}))
except pgserver.UnavailableError as exc:
    print(json.dumps({"reason": str(exc), "left": os.listdir(sys.argv[2])}))
"""


def test_missing_psycopg_is_named_before_a_server_starts(tmp_path):
    base = tmp_path / "pg"
    base.mkdir()
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(TESTS), str(base)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    got = json.loads(out.stdout)
    assert got == {"reason": "psycopg is not installed: pip install -e '.[postgres]'", "left": []}


def test_the_fixture_skips_with_that_reason(tmp_path):
    """The pg_server fixture turns the reason into the skip's reason."""
    (tmp_path / "test_pg.py").write_text("def test_needs_pg(pg_server):\n    pass\n")
    (tmp_path / "conftest.py").write_text(
        "import importlib.util, sys\n"
        "sys.modules['psycopg'] = None\n"
        f"sys.path.insert(0, {str(TESTS)!r})\n"
        "spec = importlib.util.spec_from_file_location(\n"
        f"    'valorch_tests_conftest', {str(TESTS / 'conftest.py')!r})\n"
        "shared = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(shared)\n"
        "pg_server = shared.pg_server\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 skipped" in out.stdout
    assert "psycopg is not installed: pip install -e '.[postgres]'" in out.stdout
