"""The orchestrator image builds from a public base on a fresh runner, and compose.yaml
is a valid Compose file for both Compose implementations.

The public base (``debian:bookworm-slim``) is made here the way the test images are
(scripts/build-test-images.sh: debootstrap + docker import, ``valorch/base:bookworm``)
and tagged with the public name in the test engine only (the tag is removed again when
this test made it); Python packages come from a wheelhouse the host's pip builds, served
on 127.0.0.1: no registry is reached."""

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
import uuid

import pytest
from root_helpers import ROOT

DOCKERFILE = ROOT / "images" / "docker" / "Dockerfile.orchestrator"
PUBLIC_BASE = "debian:bookworm-slim"
LOCAL_BASE = "valorch/base:bookworm"


def _docker(*args, **kw):
    return subprocess.run(["docker", *args], capture_output=True, text=True, **kw)


def test_dockerfile_names_a_public_base():
    text = DOCKERFILE.read_text()
    assert (
        f"ARG BASE_IMAGE={PUBLIC_BASE}" in text and "valorch/base" not in text.split("FROM", 1)[1]
    )


@pytest.mark.docker
def test_orchestrator_image_builds_from_the_public_base(tmp_path):
    if _docker("image", "inspect", LOCAL_BASE).returncode != 0:
        pytest.fail(f"{LOCAL_BASE} missing: run make test-images (scripts/build-test-images.sh)")
    tagged_here = _docker("image", "inspect", PUBLIC_BASE).returncode != 0
    if tagged_here:
        assert _docker("tag", LOCAL_BASE, PUBLIC_BASE).returncode == 0
    wheels = tmp_path / "wheels"
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--wheel-dir",
            str(wheels),
            f"{ROOT}[all]",  # the image installs every satellite
            "setuptools>=68",
            "wheel",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(wheels))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    tag = f"valorch-test/orchestrator:{uuid.uuid4().hex[:12]}"
    try:
        build = _docker(
            "build",
            "--network",
            "host",
            "-q",
            "-f",
            str(DOCKERFILE),
            "-t",
            tag,
            "--build-arg",
            f"PIP_ARGS=--no-index --find-links http://127.0.0.1:{server.server_port}/",
            str(ROOT),
            timeout=1800,
        )
        assert build.returncode == 0, build.stderr[-3000:]
        version = _docker("run", "--rm", "--network", "none", tag, "valorch", "--version")
        assert version.returncode == 0 and version.stdout.startswith("valorch "), version.stderr
        helped = _docker(
            "run", "--rm", "--network", "none", tag, "valorch", "images", "list", "--help"
        )
        assert helped.returncode == 0 and "Usage: valorch images list" in helped.stdout
        # the satellites are installed: site build starts (an empty store is its own error)
        site = _docker("run", "--rm", "--network", "none", tag, "valorch", "site", "build")
        assert "valorch[site]" not in site.stderr, site.stderr
    finally:
        server.shutdown()
        _docker("image", "rm", "-f", tag)
        if tagged_here:
            _docker("image", "rm", PUBLIC_BASE)  # the tag only; the local base stays


def test_compose_file_has_no_obsolete_version_key():
    assert not any(
        line.startswith("version:") for line in (ROOT / "compose.yaml").read_text().splitlines()
    )


@pytest.mark.parametrize(
    "compose",
    [("docker", "compose"), ("docker-compose",)],
    ids=["docker compose", "docker-compose"],
)
def test_compose_config_passes(compose):
    if shutil.which(compose[0]) is None or (
        len(compose) > 1 and _docker("compose", "version").returncode != 0
    ):
        pytest.skip(f"{' '.join(compose)} is not installed here")
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPOSE_")}
    proc = subprocess.run(
        [*compose, "-f", str(ROOT / "compose.yaml"), "config"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert "valorch:" in proc.stdout and "Dockerfile.orchestrator" in proc.stdout
    assert "obsolete" not in proc.stderr.lower()
