"""valorch hosts list | probe | check"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from ..errors import InfrastructureError, InputError
from ..hosts import gfx_from_target_version, parse_kfd_properties, parse_nvidia_smi
from ..host_inventory import resolve_hosts
from ..spec import GPU, HostSpec
from .common import CatalogOption, DbOption, JsonOption, err, load_catalog, out, print_json, sessions

app = typer.Typer(help="Hosts and their GPUs.", no_args_is_help=True)
HostsOption = typer.Option(None, "--hosts", envvar="VALORCH_HOSTS",
                           help="Host inventory YAML [default: this machine, as detected].")
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
print(json.dumps({'kfd': nodes, 'nvidia': smi, 'kernel': os.uname().release,
                  'free_bytes': st.f_bavail * st.f_frsize}))
"""


def _table(hosts: tuple[HostSpec, ...]) -> Table:
    table = Table("host", "endpoint", "labels", "slots", "GPUs")
    for host in hosts:
        gpus = ", ".join(f"{g.vendor}:{g.arch}#{g.index}" for g in host.gpus) or "none"
        table.add_row(host.name, host.endpoint + (" (tls)" if host.tls else ""), ",".join(host.labels),
                      str(host.slots), gpus)
    return table


@app.command("list")
def list_hosts(hosts_file: Path = HostsOption, as_json: bool = JsonOption) -> None:
    """The hosts of the inventory (--hosts / VALORCH_HOSTS), else the local host as detected."""
    hosts = resolve_hosts(hosts_file)
    if as_json:
        print_json([h.model_dump(mode="json") for h in hosts])
        return
    out.print(_table(hosts))


def _pick(hosts: tuple[HostSpec, ...], name: str | None) -> tuple[HostSpec, ...]:
    if not name:
        return hosts
    chosen = tuple(h for h in hosts if h.name == name)
    if not chosen:
        raise InputError(f"no host '{name}' in the inventory ({', '.join(h.name for h in hosts)})",
                         "valorch hosts list --hosts FILE shows the names")
    return chosen


def _run_detect(client: Any, image: str | None, root: str = "/") -> dict[str, Any]:
    """The detection script in a small container on that engine (/sys mounted read-only)."""
    import docker.errors

    candidates = (image,) if image else PROBE_IMAGES
    present = None
    for ref in candidates:
        try:
            client.images.get(ref)
            present = ref
            break
        except docker.errors.ImageNotFound:
            continue
    if present is None:
        raise InfrastructureError(f"no probe image on this engine (tried {', '.join(candidates)})",
                                  "load one there (docker save IMAGE | docker -H ENDPOINT load) or pass --image")
    volumes = {"/sys": {"bind": "/host-sys", "mode": "ro"}}
    if root != "/":
        volumes[root] = {"bind": "/docker-root", "mode": "ro"}
    raw = client.containers.run(present, ["python3", "-c", DETECT], remove=True, network_mode="none",
                                volumes=volumes, environment={"ROOT": "/docker-root" if root != "/" else "/"},
                                labels={"org.valorch": "1", "org.valorch.probe": "hosts"})
    return json.loads(raw.decode().strip().splitlines()[-1])


def gpus_from_detection(found: dict[str, Any]) -> tuple[GPU, ...]:
    """GPUs from what the detection container reported (same parsers as the local detection)."""
    gpus: list[GPU] = []
    for name in sorted(found.get("kfd", {}), key=lambda n: int(n) if n.isdigit() else 1 << 30):
        props = parse_kfd_properties(found["kfd"][name])
        if props.get("gfx_target_version"):
            gpus.append(GPU(vendor="amd", arch=gfx_from_target_version(props["gfx_target_version"]),
                            index=len(gpus), render_minor=props.get("drm_render_minor")))
    if found.get("nvidia"):
        gpus.extend(parse_nvidia_smi(found["nvidia"]))
    return tuple(gpus)


@app.command("probe")
def probe(name: str = typer.Argument(None, help="Host name [default: every host]."), hosts_file: Path = HostsOption,
          image: str = typer.Option(None, "--image", help="Image with python3 present on that engine."),
          as_json: bool = JsonOption) -> None:
    """Detect the GPUs of each host by running the detection in a small container on its engine."""
    from ..executors.docker import connect

    report = []
    for host in _pick(resolve_hosts(hosts_file), name):
        client = connect(host, timeout=30)
        found = _run_detect(client, image)
        gpus = gpus_from_detection(found)
        report.append(host.model_copy(update={"gpus": gpus, "kernel": found.get("kernel")}))
    if as_json:
        print_json([h.model_dump(mode="json") for h in report])
    else:
        out.print(_table(tuple(report)))


def _check_host(host: HostSpec, refs: list[tuple[str, str | None]], image: str | None) -> dict[str, Any]:
    from ..executors.docker import connect

    row: dict[str, Any] = {"host": host.name, "endpoint": host.endpoint, "problems": []}
    try:
        client = connect(host, timeout=20)
    except InfrastructureError as exc:
        row["problems"].append(exc.message)
        return row
    info = client.info()
    row["engine"] = client.version().get("Version")
    row["docker_root"] = info.get("DockerRootDir")
    try:
        row["free_gib"] = round(_run_detect(client, image, row["docker_root"] or "/")["free_bytes"] / 2**30, 1)
    except Exception as exc:  # noqa: BLE001 - reported as a problem of this host
        row["problems"].append(f"disk check failed: {str(exc)[:200]}")
    row["images"] = {}
    for ref, digest in refs:
        import docker.errors

        try:
            img = client.images.get(ref)
        except docker.errors.ImageNotFound:
            row["images"][ref] = "missing"
            row["problems"].append(f"image {ref} is not present")
            continue
        have = [d.split("@", 1)[1] for d in img.attrs.get("RepoDigests") or []]
        if digest and digest not in have and digest != img.id:
            row["images"][ref] = "digest mismatch"
            row["problems"].append(f"image {ref}: digest {', '.join(have) or img.id} is not the catalog's {digest}")
        else:
            row["images"][ref] = "ok"
    return row


@app.command("check")
def check(hosts_file: Path = HostsOption, job: Path = typer.Option(None, "--job", "-j", help="Check this job's images."),
          images: list[str] = typer.Option(None, "--image", "-i", help="Check these images (repeatable)."),
          probe_image: str = typer.Option(None, "--probe-image", help="Image with python3 for the disk check."),
          level: int = typer.Option(None, "--level", min=0, max=1, help="Also the GPU preflight: 0 = device nodes, "
                                    "driver version, a container with the device options; 1 = and SMI health, "
                                    "rvs / dcgmi diag -r 1, the kernel log."),
          since: float = typer.Option(60.0, "--since", help="Minutes of kernel log that --level 1 scans."),
          db: str = DbOption, catalog: Path = CatalogOption, as_json: bool = JsonOption) -> None:
    """Preflight: each engine answers (version), disk free under its Docker root, the job's
    images present (with the catalog's digests when known), the results DB writable; with
    --level, the GPU preflight per host. Exit 3 on a problem."""
    from sqlalchemy import text

    from ..catalog import load_job

    cat = load_catalog(catalog)
    selected = list(load_job(job, cat).images) if job else []
    selected += list(images or [])
    refs = [(i.reference, i.digest) for i in cat.select(selected) if i.executor == "docker"] if selected else []
    hosts = resolve_hosts(hosts_file)
    rows = [_check_host(h, refs, probe_image) for h in hosts]
    if level is not None:
        from datetime import datetime, timedelta

        from ..services import preflight as pf

        window = datetime.now().astimezone() - timedelta(minutes=since)
        for host, row in zip(hosts, rows):
            verdicts = [pf.level0(host, b, probe_image) if level == 0 else pf.level1(host, b, window)
                        for b in pf.backends_of(host)]
            row["preflight"] = [v.as_dict() for v in verdicts]
            row["problems"] += [f"L{level} preflight: {v.reason}" for v in verdicts if not v.ok]
    db_problem = None
    try:
        factory = sessions(db)
        with factory() as session:
            session.execute(text("CREATE TABLE IF NOT EXISTS valorch_preflight (x INTEGER)"))
            session.execute(text("INSERT INTO valorch_preflight VALUES (1)"))
            session.execute(text("DROP TABLE valorch_preflight"))
            session.commit()
    except Exception as exc:  # noqa: BLE001
        db_problem = f"results database not writable: {str(exc)[:300]}"
    if as_json:
        print_json({"hosts": rows, "db": db_problem or "ok"})
    else:
        table = Table("host", "engine", "free GiB", "images", "problems")
        for r in rows:
            imgs = ", ".join(f"{k.split('/')[-1]}:{v}" for k, v in r.get("images", {}).items()) or "-"
            table.add_row(r["host"], str(r.get("engine", "-")), str(r.get("free_gib", "-")), imgs,
                          "; ".join(r["problems"]) or "ok")
        out.print(table)
        err.print(f"results database: {db_problem or 'writable'}")
    if db_problem or any(r["problems"] for r in rows):
        raise typer.Exit(3)
