"""Engine-side host probes: GPU and disk detection in a small container on a host's engine
(/sys of the host mounted read-only), and an engine's preflight (version, disk, images)."""

from __future__ import annotations

from typing import Any

import docker.errors

from .. import netbody
from ..errors import InfrastructureError
from ..spec import HostSpec
from .docker import connect

PROBE_IMAGES = ("valorch/base:bookworm", "valorch/base:bullseye", "python:3-slim")

# Runs in a small container on the host's engine; /sys of the host is mounted at /host-sys.
DETECT = r"""
import glob, json, os, shutil, subprocess
nodes = {}
for p in glob.glob('/host-sys/class/kfd/kfd/topology/nodes/*/properties'):
    try: nodes[p.split('/')[-2]] = open(p).read()
    except OSError: pass
smi = None
if shutil.which('nvidia-smi'):
    r = subprocess.run(['nvidia-smi', '--query-gpu=index,name,uuid,memory.total,compute_cap,driver_version',
                        '--format=csv,noheader,nounits'], capture_output=True, text=True)
    smi = r.stdout if r.returncode == 0 else None
st = os.statvfs(os.environ.get('ROOT', '/'))
def text(path, limit=200000):
    try:
        with open(path, errors='replace') as f: return f.read(limit)
    except OSError: return None
# host facts (hosts/facts.py reads them): /proc is the host's kernel's, /sys and /opt, /usr/local the host's (read-only)
facts = {'cpuinfo': text('/proc/cpuinfo'), 'meminfo': text('/proc/meminfo', 4000),
         'modules': {m: text('/host-sys/module/%s/version' % m, 200) or ('' if os.path.isdir('/host-sys/module/' + m) else None)
                     for m in ('amdgpu', 'nvidia')},
         'rocm': {p[len('/host-opt/'):]: text(p, 200) for p in sorted(glob.glob('/host-opt/rocm*/.info/version'))},
         'cuda': {p[len('/host-usr-local/'):]: text(p, 20000) for p in sorted(glob.glob('/host-usr-local/cuda*/version.json'))
                  + sorted(glob.glob('/host-usr-local/cuda*/version.txt'))}}
if shutil.which('nvidia-smi'):
    r = subprocess.run(['nvidia-smi'], capture_output=True, text=True)
    facts['nvidia_smi'] = r.stdout[:4000] if r.returncode == 0 else None
print(json.dumps({'kfd': nodes, 'nvidia': smi, 'kernel': os.uname().release,
                  'free_bytes': st.f_bavail * st.f_frsize, 'facts': facts}))
"""
# the engine's own facts that `hosts probe` shows (docker info of that engine)
ENGINE_FACTS = (
    "NCPU",
    "MemTotal",
    "KernelVersion",
    "DefaultRuntime",
    "Runtimes",
    "ServerVersion",
    "OperatingSystem",
    "Architecture",
)


def detect(host: HostSpec, image: str | None, timeout: float = 30) -> dict[str, Any]:
    """What the detection container reports on that host's engine (kfd nodes, nvidia-smi, kernel)."""
    return run_detect(connect(host, timeout=timeout), image)


def run_detect(client: Any, image: str | None, root: str = "/") -> dict[str, Any]:
    """The detection script in a small container on that engine (/sys mounted read-only)."""
    candidates = (image,) if image else PROBE_IMAGES
    present = next((ref for ref in candidates if _get(client, ref) is not None), None)
    if present is None:
        raise InfrastructureError(
            f"no probe image on this engine (tried {', '.join(candidates)})",
            "load one there (docker save IMAGE | docker -H ENDPOINT load) or pass --probe-image",
        )
    volumes = {
        "/sys": {"bind": "/host-sys", "mode": "ro"},
        "/opt": {"bind": "/host-opt", "mode": "ro"},
        "/usr/local": {"bind": "/host-usr-local", "mode": "ro"},
    }  # FHS directories: present on every host
    if root != "/":
        volumes[root] = {"bind": "/docker-root", "mode": "ro"}
    raw = client.containers.run(
        present,
        ["python3", "-c", DETECT],
        remove=True,
        network_mode="none",
        volumes=volumes,
        environment={"ROOT": "/docker-root" if root != "/" else "/"},
        labels={"org.valorch": "1", "org.valorch.probe": "hosts"},
    )
    try:  # what the image printed: bounded in size and depth
        found = netbody.loads(raw.decode().strip().splitlines()[-1], netbody.ENGINE_REPORT)
        if not isinstance(found, dict):
            raise ValueError("not a JSON object")
    except (ValueError, IndexError) as exc:
        raise InfrastructureError(
            f"the detection container ({present}) printed no report valorch reads: {exc}",
            "run it by hand (docker run --rm IMAGE python3 -c ...) to see what it prints, "
            "or pass another --probe-image",
        ) from None
    try:
        info = client.info()
        found["engine"] = {k: info.get(k) for k in ENGINE_FACTS}
    except docker.errors.APIError:
        found["engine"] = {}
    return found


def check_engine(
    host: HostSpec, refs: list[tuple[str, str | None, str]], image: str | None
) -> dict[str, Any]:
    """One engine's preflight: version, Docker root, disk free under it, and each image as the
    run will use it: ``refs`` are (catalog reference, catalog digest, what the engine runs),
    the last ``repo@sha256:…`` when the catalog pins a digest, so an image present by its
    digest is ready even when its tag is gone (``run --pull never`` runs it). Problems are
    data in the row (``problems``), not exceptions."""
    row: dict[str, Any] = {"host": host.name, "endpoint": host.endpoint, "problems": []}
    try:
        client = connect(host, timeout=20)
    except InfrastructureError as exc:
        row["problems"].append(exc.message)
        return row
    info = client.info()
    row["engine"] = client.version().get("Version")
    row["docker_root"] = info.get("DockerRootDir")
    _disk(client, host, image, row)
    row["images"] = {}
    for ref, digest, runs in refs:
        state, problem = image_state(client, ref, digest, runs)
        row["images"][ref] = state
        if problem:
            row["problems"].append(problem)
    return row


def _disk(client: Any, host: HostSpec, image: str | None, row: dict[str, Any]) -> None:
    """Free space under the Docker root into ``row`` (``free_gib``) with ``disk_evidence``: the
    probe container's statvfs; without a probe image, statvfs of ``docker info``'s
    DockerRootDir from here when the engine is local, else "unknown" (a problem: unverified)."""
    root = row["docker_root"] or "/"
    try:
        free = run_detect(client, image, root)["free_bytes"]
        row["disk_evidence"] = f"probe container on the engine, statvfs of {root}"
    except InfrastructureError as exc:  # no probe image: the engine's own word, where local
        from .pull import free_bytes

        free = free_bytes(client, host)
        if free is None:
            row["disk_evidence"] = "unknown (remote engine without the probe image)"
            row["problems"].append(
                f"disk check: {exc.message}" + (f"; {exc.hint}" if exc.hint else "")
            )
            return
        row["disk_evidence"] = (
            f"docker info's DockerRootDir {root}, statvfs on this machine (no probe image)"
        )
    except Exception as exc:  # noqa: BLE001 - reported as a problem of this host
        row["problems"].append(f"disk check failed: {str(exc)[:200]}")
        return
    row["free_gib"] = round(free / 2**30, 1)


def _get(client: Any, reference: str) -> Any:
    try:
        return client.images.get(reference)
    except docker.errors.ImageNotFound:
        return None


def image_state(client: Any, ref: str, digest: str | None, runs: str) -> tuple[str, str | None]:
    """("ok" | "missing" | "digest mismatch", the problem or None) of one image on an engine:
    present by what the run uses (the pinned digest), else by its tag with that digest."""
    if runs != ref and _get(client, runs) is not None:
        return "ok", None
    img = _get(client, ref)
    if img is None:
        pinned = f" (pinned {digest})" if digest and runs != ref else ""
        return "missing", (
            f"image {ref}{pinned} is not present; valorch images pull it (by its digest)"
        )
    have = [d.split("@", 1)[1] for d in img.attrs.get("RepoDigests") or []]
    if digest and digest not in have and digest != img.id:
        return "digest mismatch", (
            f"image {ref}: digest {', '.join(have) or img.id} is not the catalog's {digest}; "
            "valorch images pull it (by the catalog's digest)"
        )
    return "ok", None
