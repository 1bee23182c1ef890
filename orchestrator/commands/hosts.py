"""valorch hosts list | probe | check"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..applies import LEVEL_1, Applies
from . import flags
from .common import (
    CatalogOption,
    DbOption,
    HostsOption,
    JsonOption,
    end_with,
    err,
    load_catalog,
    out,
    print_json,
    sessions,
)
from .tables import Column, Table

if TYPE_CHECKING:
    from ..spec import HostSpec

app = typer.Typer(help="Hosts and their GPUs.", no_args_is_help=True)


def _table(hosts: tuple[HostSpec, ...]) -> Table:
    table = Table("host", "endpoint", "labels", "slots", "GPUs")
    for host in hosts:
        gpus = ", ".join(f"{g.vendor}:{g.arch}#{g.index}" for g in host.gpus) or "none"
        table.add_row(
            host.name,
            host.endpoint + (" (tls)" if host.tls else ""),
            ",".join(host.labels),
            str(host.slots),
            gpus,
        )
    return table


@app.command("list")
def list_hosts(hosts_file: Path = HostsOption, as_json: bool = JsonOption) -> None:
    """The hosts of the inventory (--hosts / VALORCH_HOSTS), else the local host as detected."""
    from ..hosts.inventory import resolve_hosts

    hosts = resolve_hosts(hosts_file)
    if as_json:
        print_json([h.model_dump(mode="json") for h in hosts])
        return
    out.print(_table(hosts))


@app.command("probe")
def probe(
    name: str = typer.Argument(None, help="Host name [default: every host]."),
    hosts_file: Path = HostsOption,
    image: str = typer.Option(
        None, "--probe-image", "--image", help="Image with python3 present on that engine."
    ),
    as_json: bool = JsonOption,
    record: Path = typer.Option(
        None,
        "--record",
        help="Record this machine's SMI outputs, KFD topology, "
        "torch device properties, probe results and kernel names into DIR "
        "(scrubbed), to become test fixtures; no engine is used.",
        metavar="DIR",
    ),
) -> None:
    """Detect the GPUs of each host by running the detection in a small container on its engine, with
    the host's facts: CPU model and count, memory, kernel, GPU driver, ROCm / CUDA release and the
    container runtime, each with its evidence. With --record, write this machine's evidence as fixtures."""
    from ..services import hosts as service

    if record is not None:
        manifest = service.record(record)
        if as_json:
            print_json(manifest)
        else:
            out.print(
                f"recorded {record}: gpu={manifest['gpu']}, {manifest['probe']['results']} probe results, "
                f"{manifest['probe']['kernel_names']} kernel names, {manifest['kfd_files']} KFD files"
                + (
                    "; no GPU: " + "; ".join(manifest["no_gpu_evidence"])
                    if not manifest["gpu"]
                    else ""
                ),
                markup=False,
            )
        return
    report = service.probe_with_facts(hosts_file, name, image)
    if as_json:
        print_json(
            [
                {
                    **h.model_dump(mode="json"),
                    "facts": [
                        {"fact": f.name, "value": f.value, "evidence": f.evidence} for f in facts
                    ],
                }
                for h, facts in report
            ]
        )
    else:
        out.print(_table(tuple(h for h, _facts in report)))
        table = Table("host", "fact", "value", "evidence", title="host facts")
        for h, facts in report:
            for f in facts:
                table.add_row(h.name, f.name, f.value, f.evidence)  # the host's own words
        out.print(table)


@app.command("check")
def check(
    hosts_file: Path = HostsOption,
    job: Path = typer.Option(None, "--job", "-j", help="Check this job's images."),
    images: list[str] = typer.Option(
        None, "--image", "-i", help="Check these images (repeatable)."
    ),
    probe_image: str = typer.Option(
        None, "--probe-image", help="Image with python3 for the disk check."
    ),
    level: int = typer.Option(
        None,
        "--level",
        min=0,
        max=1,
        help="Also the GPU preflight: 0 = device nodes, "
        "driver version, a container with the device options; 1 = and SMI health, "
        "rvs / dcgmi diag -r 1, the kernel log.",
    ),
    since: float = flags.option(
        60.0,
        "--since",
        applies=Applies(needs=LEVEL_1, why="only level 1 scans the kernel log"),
        callback=flags.number("--since", 0, 525_600, lo_open=True),
        help="Minutes of kernel log that --level 1 scans (at most a year).",
    ),
    cpu_only: bool = typer.Option(
        False, "--cpu-only", help="Place GPU images as run --cpu-only does (on CPU slots)."
    ),
    db: str = DbOption,
    catalog: Path = CatalogOption,
    as_json: bool = JsonOption,
) -> None:
    """Preflight: each engine answers (version), disk free under its Docker root (from a probe
    container, else statvfs of docker info's root where the engine is local), the job's images
    present (with the catalog's digests when known), every image placed on these hosts by the run's
    own planner (what valorch run would refuse, with its words), the results DB writable; with
    --level, the GPU preflight per host (docs/registries.md). Exit 3 on a problem."""
    from ..services import hosts as service

    found = service.check(
        hosts_file,
        load_catalog(catalog),
        job,
        images or [],
        probe_image,
        lambda: sessions(db),
        level=level,
        since_minutes=since,
        cpu_only=cpu_only,
    )
    rows, db_problem = list(found.hosts), None if found.db == "ok" else found.db
    if as_json:
        print_json(found.as_json())
    else:
        table = Table(
            "host",
            "engine",
            "free GiB",
            Column("disk evidence", overflow="fold"),
            Column("images", overflow="fold"),
            "problems",
        )
        for r in rows:
            # whole references
            imgs = ", ".join(f"{k} ({v})" for k, v in r.get("images", {}).items()) or "-"
            table.add_row(
                r["host"],
                str(r.get("engine", "-")),
                str(r.get("free_gib", "-")),
                r.get("disk_evidence", "-"),
                imgs,
                "; ".join(r["problems"]) or "ok",
            )
        out.print(table)
        preflight = Table(
            "host", "level", "probe", "ok", Column("detail", overflow="fold"), title="GPU preflight"
        )
        for r in rows:
            for verdict in r.get("preflight") or ():
                for p in verdict["probes"]:
                    preflight.add_row(
                        r["host"],
                        f"L{p['level']}",
                        p["name"],
                        ("skipped" if p["detail"].startswith("skipped") else "yes")
                        if p["ok"]
                        else "NO",
                        p["detail"],
                    )
        if preflight.row_count:
            out.print(preflight)
        why = Column("why (as valorch run says)", overflow="fold")
        placement = Table("image", "placed", why, title="placement")
        for u in found.placement:  # the images the run's placement finds no host for
            placement.add_row(u.image, "NO", u.reason + (f"\nhint: {u.hint}" if u.hint else ""))
        if found.placement:
            out.print(placement)
        err.print(f"results database: {db_problem or 'writable'}")
    end_with(found.outcome)
