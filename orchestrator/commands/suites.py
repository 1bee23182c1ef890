"""valorch suites list | show"""

from __future__ import annotations

import typer

from ..errors import InputError
from .common import JsonOption, out, print_json
from .tables import Table

app = typer.Typer(help="Workload suites and their checks.", no_args_is_help=True)


@app.command("list")
def list_suites(as_json: bool = JsonOption) -> None:
    """Every suite with every check's feature, kind and library."""
    from ..checks_manifest import manifest

    cat = manifest().catalog()
    if as_json:
        print_json(cat)
        return
    checks = {c["id"]: c for c in cat["checks"]}
    for s in cat["suites"]:
        table = Table(
            "check",
            "feature",
            "kind",
            "library",
            title=f"{s['name']} — {s['description']}",
            title_justify="left",
        )
        for cid in s["checks"]:
            c = checks[cid]
            table.add_row(cid, c["feature"], c["kind"], c["library"] or "")
        out.print(table)


@app.command("show")
def show_suite(
    name: str = typer.Argument(..., help="A suite name, as `valorch suites list` shows it."),
    as_json: bool = JsonOption,
) -> None:
    """One suite: its checks and what each proves."""
    from ..checks_manifest import manifest

    cat = manifest().catalog()
    suite = next((s for s in cat["suites"] if s["name"] == name), None)
    if suite is None:
        raise InputError(
            f"unknown suite '{name}'",
            "valorch suites list shows the suites: " + ", ".join(s["name"] for s in cat["suites"]),
        )
    checks = [c for c in cat["checks"] if c["suite"] == name]
    if as_json:
        print_json({**suite, "checks": checks})
        return
    out.print(
        f"[bold]{name}[/bold] (framework: {suite['framework'] or 'none'}): {suite['description']}"
    )
    for c in checks:
        lib = f" [{c['library']}]" if c["library"] else ""
        out.print(f"  {c['id']:40} {c['kind']:11} {c['feature']}{lib}\n      {c['description']}")
