"""valorch hosts list"""

from __future__ import annotations

import typer
from rich.table import Table

from ..hosts import detect_local
from .common import JsonOption, out, print_json

app = typer.Typer(help="Hosts and their GPUs.", no_args_is_help=True)


@app.command("list")
def list_hosts(as_json: bool = JsonOption) -> None:
    """The local host as detected (KFD sysfs for AMD GPUs, nvidia-smi for NVIDIA)."""
    host = detect_local()
    if as_json:
        print_json([host.model_dump(mode="json")])
        return
    table = Table("host", "endpoint", "labels", "slots", "GPUs")
    gpus = ", ".join(f"{g.vendor}:{g.arch}#{g.index}" for g in host.gpus) or "none"
    table.add_row(host.name, host.endpoint, ",".join(host.labels), str(host.slots), gpus)
    out.print(table)
