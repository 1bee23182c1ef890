"""Registry figures: `valorch images check` of the 8 catalogued rocm/pytorch tags
against a local registry (docker-registry 2.8, TLS, basic auth; a small image pushed under
those 8 names, docker.io mapped to it), and a pull of a test image by digest with
`valorch images pull` against `docker pull` of the same reference, as a ratio.

Reuses the test suite's registry set-up (tests/integration/registry_support.py)."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
import registry_support as rs

VALORCH = str(Path(sys.executable).with_name("valorch"))
REPEAT = 5


def timed(argv, env=None) -> float:
    t = time.perf_counter()
    done = subprocess.run(
        argv, capture_output=True, text=True, env={**os.environ, **(env or {})}, cwd=ROOT
    )
    wall = time.perf_counter() - t
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv} failed ({done.returncode}): {done.stderr}")
    return wall


def main() -> None:
    base = Path(tempfile.mkdtemp(prefix="valorch-bench-registry-"))
    reg, engine_certs, log = rs.start_registry(base, "basic")
    tiny = random = None
    try:
        # a tiny image under the 8 rocm/pytorch tags
        tiny = "valorch/bench-tiny:" + uuid.uuid4().hex[:8]
        tar = subprocess.run(
            ["bash", "-c", "d=$(mktemp -d) && echo x > $d/x && tar -C $d -c x"],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["docker", "import", "-", tiny], input=tar, capture_output=True, check=True)
        import yaml

        tags = [
            i["reference"].split(":", 1)[1]
            for i in yaml.safe_load((ROOT / "images" / "rocm.yaml").read_text())["images"]
        ]
        for tag in tags:
            reg.push(tiny, f"rocm/pytorch:{tag}")
        certs = base / "hub-certs" / "docker.io"
        certs.mkdir(parents=True)
        shutil.copy(reg.ca, certs / "ca.crt")
        cfg = base / "hub-cfg"
        cfg.mkdir()
        auth = next(
            iter(json.loads((reg.docker_config / "config.json").read_text())["auths"].values())
        )
        (cfg / "config.json").write_text(json.dumps({"auths": {"docker.io": auth}}))
        env = {
            "VALORCH_REGISTRY_ENDPOINTS": f"docker.io=https://{reg.host}",
            "VALORCH_CERTS_D": str(base / "hub-certs"),
            "DOCKER_CONFIG": str(cfg),
        }
        check = [
            timed([VALORCH, "images", "check", "family:rocm", "--json"], env) for _ in range(REPEAT)
        ]
        floor = [timed([VALORCH, "version"]) for _ in range(REPEAT)]

        # a 64 MiB random image pulled by digest: valorch images pull vs docker pull
        random = "valorch/bench-random:" + uuid.uuid4().hex[:8]
        tar = subprocess.run(
            [
                "bash",
                "-c",
                "d=$(mktemp -d) && head -c 67108864 /dev/urandom > $d/blob && "
                "tar -C $d -c blob && rm -rf $d",
            ],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(
            ["docker", "import", "-", random], input=tar, capture_output=True, check=True
        )
        digest = reg.push(random, "bench/random:v1")
        pinned = f"{reg.host}/bench/random@{digest}"
        subprocess.run(["docker", "rmi", random], capture_output=True)
        cat = base / "images"
        cat.mkdir()
        (cat / "b.yaml").write_text(
            f"family: b\nbackend: cpu\nimages:\n  - alias: rnd\n"
            f'    reference: {reg.host}/bench/random:v1\n    digest: "{digest}"\n'
        )
        ours, docker = [], []
        for _ in range(REPEAT):
            subprocess.run(["docker", "rmi", pinned], capture_output=True)
            docker.append(timed(["docker", "--config", str(reg.docker_config), "pull", pinned]))
            subprocess.run(["docker", "rmi", pinned], capture_output=True)
            ours.append(
                timed(
                    [VALORCH, "images", "pull", "rnd", "--catalog", str(cat), "--json"], reg.env()
                )
            )
        subprocess.run(["docker", "rmi", pinned], capture_output=True)
    finally:
        rs.stop_registry(reg, engine_certs, log)
        for image in (tiny, random):
            if image:
                subprocess.run(["docker", "rmi", image], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)
    c, f = statistics.median(check), statistics.median(floor)
    o, d = statistics.median(ours), statistics.median(docker)
    print("| measure | median (s) | floor (s) | ratio |")
    print("|---|---|---|---|")
    print(
        f"| `valorch images check family:rocm` (8 tags, HEAD each) | {c:.2f} | {f:.2f} (`valorch version`) | {c / f:.2f} |"
    )
    print(
        f"| `valorch images pull` of a 64 MiB image by digest | {o:.2f} | {d:.2f} (`docker pull` same ref) | {o / d:.2f} |"
    )
    print(
        f"\n(medians of {REPEAT}; check samples {[round(x, 2) for x in check]}, "
        f"pull samples {[round(x, 2) for x in ours]} vs docker {[round(x, 2) for x in docker]})"
    )


if __name__ == "__main__":
    main()
