import os
import shutil
import subprocess
import sys
from pathlib import Path

import needs
import parallel
import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]

# Hypothesis: no deadline, as no test asserts a time (speed is measured in bench/); on a loaded
# machine or beside parallel workers a 200 ms deadline fails an example that is only slow.
# In CI (CI=true) the examples are derived from each test, not drawn at random, so that a
# clean clone's verdict does not depend on the draw: new inputs are explored by the runs made
# while developing (docs/testing.md, "Property tests").
settings.register_profile("dev", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") == "true" else "dev")

# pytest-xdist's workers run with COLUMNS=80 and LINES=24 in their environment, which every
# console script a test starts would inherit: piped output would wrap at 80 columns on a
# worker and at 120 in a serial run. The tests see one environment either way.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)

VALORCH = str(Path(sys.executable).with_name("valorch"))


FAKE_ROCM = "valorch/test:fake-rocm"


def ensure_fake_rocm() -> str:
    """The fake ROCm test image, built here from images/docker where make test-images did not."""
    if subprocess.run(["docker", "image", "inspect", FAKE_ROCM], capture_output=True).returncode:
        dockerfile = str(ROOT / "images/docker/Dockerfile.fake-rocm")
        subprocess.run(
            [
                "docker",
                "build",
                "-q",
                "-t",
                FAKE_ROCM,
                "-f",
                dockerfile,
                str(ROOT / "images/docker"),
            ],
            check=True,
            capture_output=True,
            timeout=600,
        )
    return FAKE_ROCM


def run_cli(*args, db=None, cwd=None, timeout=600, env=None):
    """Run the real console script; returns CompletedProcess (text)."""
    full_env = dict(os.environ)
    full_env.pop("VALORCH_DB", None)
    if db is not None:
        full_env["VALORCH_DB"] = str(db)
    full_env.update(env or {})
    return subprocess.run(
        [VALORCH, *args],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        timeout=timeout,
        env=full_env,
    )


def selftest_at_once(image: str, db, n: int = 8) -> None:
    """``n`` valorch processes run the selftest suite's pass and fail checks of ``image``
    into one store at once (a SQLite file or a server URL): each exits 0, with no
    "database is locked" and no traceback."""
    env = {k: v for k, v in os.environ.items() if k != "VALORCH_DB"}
    argv = [
        VALORCH,
        "run",
        "--image",
        image,
        "--suite",
        "selftest",
        "--check",
        "selftest.pass",
        "--check",
        "selftest.fail",
        "--no-gate",
        "--no-matrix",
        "--db",
        str(db),
    ]
    procs = [
        subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(n)
    ]
    for p in procs:
        _out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
        assert "locked" not in err and "Traceback" not in err


TEST_IMAGES = (
    "valorch/test:debian-torch",
    "valorch/test:pip-torch",
    "valorch/base:bullseye",
    "valorch/base:bookworm",
)


@pytest.fixture(scope="session", autouse=True)
def docker_engine(request):
    """The Docker tests need the real engine and the local test images; `make test` provides
    both (scripts/ensure-engine.sh, scripts/build-test-images.sh). Selected Docker tests are
    meant to run: without them the session fails at once, saying how to get them
    (`-m "not docker"` leaves them out)."""
    if not any("docker" in item.keywords for item in request.session.items):
        return
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        pytest.fail(
            "no Docker engine answers: run scripts/ensure-engine.sh (make test does),"
            ' or leave the Docker tests out with -m "not docker"'
        )
    missing = [
        i
        for i in TEST_IMAGES
        if subprocess.run(["docker", "image", "inspect", i], capture_output=True).returncode != 0
    ]
    if missing:
        pytest.fail(f"test images missing: {missing}; run make test-images")


@pytest.fixture
def cli(tmp_path):
    db = tmp_path / "valorch.sqlite"

    def call(*args, **kw):
        kw.setdefault("db", db)
        return run_cli(*args, **kw)

    call.db = db
    return call


@pytest.fixture(scope="module")
def screen(tmp_path_factory):
    """One headless Chromium for a module's pages (tests/acceptance/screen_support.py)."""
    from tests.acceptance.screen_support import Browser

    browser = Browser(tmp_path_factory.mktemp("chromium") / "profile")
    yield browser
    browser.close()


@pytest.fixture
def probe_dir(tmp_path):
    """A private copy of the probe, named as it is inside containers."""
    dest = tmp_path / "probe"
    shutil.copytree(
        ROOT / "valorch_probe",
        dest / "valorch_probe",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return dest


# --- PostgreSQL: one real server for the session (tests/pgserver.py), a fresh database per test ---


def pytest_collection_modifyitems(items):
    for item in items:
        if "pg_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)
    needs.mark(items)


try:  # the parallel workers' scheduler (tests/parallel.py), where pytest-xdist is installed
    import xdist  # noqa: F401
except ImportError:  # the probe's own venvs (make probe-pythons) run without it
    pass
else:

    def pytest_xdist_make_scheduler(config, log):
        if config.getvalue("dist") == "loadfile":
            return parallel.scheduler(config, log)
        return None


@pytest.fixture(scope="session")
def pg_server():
    """initdb + postgres from Debian's postgresql package, as an unprivileged user, on
    127.0.0.1 and a free port; stopped (its own pid) and removed at the end."""
    import pgserver

    try:
        server = pgserver.start()
    except pgserver.UnavailableError as exc:
        pytest.skip(str(exc))
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server):
    """A fresh, empty PostgreSQL database (no schema: `valorch db upgrade` makes it)."""
    return pg_server.create_database()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_db(request, tmp_path):
    """A fresh results database at the head schema, once as a SQLite file, once on PostgreSQL."""
    from orchestrator.store.db import upgrade

    if request.param == "sqlite":
        return str(tmp_path / "v.sqlite")
    url = request.getfixturevalue("pg_server").create_database()
    upgrade(url)
    return url
