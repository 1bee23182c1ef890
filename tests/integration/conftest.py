import subprocess

import pytest

TEST_IMAGES = ("valorch/test:debian-torch", "valorch/test:pip-torch", "valorch/base:bullseye",
               "valorch/base:bookworm")


def pytest_collection_modifyitems(items):
    for item in items:
        if "integration" in str(item.fspath) and "slurm" not in item.keywords:
            item.add_marker(pytest.mark.docker)


@pytest.fixture(scope="session", autouse=True)
def docker_engine(request):
    """Integration tests need the real engine and the local test images; `make test`
    provides both (scripts/ensure-engine.sh, scripts/build-test-images.sh)."""
    if not any("docker" in item.keywords for item in request.session.items):
        return
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        pytest.fail("no Docker engine answers: run scripts/ensure-engine.sh (make test does)")
    missing = [i for i in TEST_IMAGES
               if subprocess.run(["docker", "image", "inspect", i], capture_output=True).returncode != 0]
    if missing:
        pytest.fail(f"test images missing: {missing}; run make test-images")


@pytest.fixture
def leftover_containers():
    def count():
        out = subprocess.run(["docker", "ps", "-aq", "--filter", "label=org.valorch"],
                             capture_output=True, text=True, check=True).stdout
        return len(out.split())
    return count
