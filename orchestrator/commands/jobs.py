"""valorch jobs list | show | validate | runners

``validate`` checks job spec files without running anything: every mistake of each file at
once (file:line:key, with the nearest key, suite, image or check), exit 2 on any; a
pre-commit hook runs it (.pre-commit-hooks.yaml).

``runners`` prints the self-hosted CI runner label sets a job needs, so that a
workflow's ``runs-on`` can be checked against the job it runs
(examples/github-actions/): ``self-hosted``, the backend (``rocm`` | ``cuda`` |
``cpu``), the arch requirements (``gfx942``, ``sm_90``) and the job's other labels.
"""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import InputError
from ..words import count
from .common import CatalogOption, JsonOption, err, load_catalog, out, print_json, project_dir
from .tables import Table

app = typer.Typer(help="Job specs (jobs/*.yaml) and the runners they need.", no_args_is_help=True)

JobArg = typer.Argument(
    ..., help="A job spec path, or the name of one in jobs/ (nightly → jobs/nightly.yaml)."
)


def resolve_job_path(job: str) -> Path:
    path = Path(job)
    if path.suffix in (".yaml", ".yml") or path.exists():
        if not path.exists():
            raise InputError(
                f"job spec {path} does not exist", "valorch jobs list shows the jobs in jobs/"
            )
        return path
    candidate = project_dir() / "jobs" / f"{job}.yaml"
    if not candidate.exists():
        raise InputError(
            f"no job named '{job}' in {candidate.parent}",
            "valorch jobs list shows them; or pass a path",
        )
    return candidate


@app.command("list")
def list_jobs(as_json: bool = JsonOption) -> None:
    """Every job spec of jobs/ with its images and suites."""
    from ..services.jobs import job_specs

    rows = job_specs(project_dir() / "jobs")
    if as_json:
        print_json(rows)
        return
    table = Table("name", "images", "suites", "labels", "description", title=f"{len(rows)} jobs")
    for r in rows:
        table.add_row(
            r["name"],
            ", ".join(r["images"]),
            ", ".join(r["suites"]),
            ", ".join(r["labels"]),
            r["description"],
        )
    out.print(table)


@app.command("show")
def show_job(job: str = JobArg, as_json: bool = JsonOption, catalog: Path = CatalogOption) -> None:
    """One job: the images its selectors resolve to, its suites and labels."""
    from ..catalog.core import load_job

    cat = load_catalog(catalog)
    spec = load_job(resolve_job_path(job), cat)
    images = cat.select(spec.images)
    if as_json:
        print_json(
            {
                **spec.model_dump(mode="json"),
                "resolved": [i.model_dump(mode="json") for i in images],
            }
        )
        return
    out.print(f"[bold]{spec.name}[/bold]  {spec.description}")
    out.print(f"  labels  {', '.join(spec.labels) or '-'}")
    for s in spec.suites:
        out.print(
            f"  suite   {s.name} (deadline {s.deadline:g}s, attempts {s.attempts}"
            + (f", nodes {s.nodes}" if s.nodes > 1 else "")
            + (f", GPUs per node {s.gpus_per_node}" if s.gpus_per_node else "")
            + (f", checks {', '.join(s.checks)}" if s.checks else "")
            + ")",
            markup=False,
        )
    for i in images:
        out.print(f"  image   {i.alias}  {i.backend}  {i.reference}")


@app.command("validate")
def validate_jobs(
    jobs: list[str] = typer.Argument(
        ..., help="Job spec paths (or names in jobs/): each is checked whole."
    ),
    as_json: bool = JsonOption,
    catalog: Path = CatalogOption,
) -> None:
    """Check job specs without running them: every mistake of each file at once, exit 2 on any."""
    from ..services import jobs as service

    cat = load_catalog(catalog)
    checked_files: list = []  # (path, what its check found)
    for job in jobs:
        try:
            path = resolve_job_path(job)
        except InputError as exc:
            checked_files.append((Path(job), exc))
        else:
            checked_files += [(path, c) for c in service.validate_files([path], cat)]
    bad = 0
    for path, checked in checked_files:
        if isinstance(checked, InputError):
            bad += 1
            if not as_json:
                err.print(f"{checked}", markup=False)
        elif isinstance(checked, service.KnownIssuesCheck):
            if not as_json:
                entries = count(checked.entries, "entry", "entries")
                said = f"{path}: valid (a known-issues file, not a job spec: {entries})"
                out.print(said, markup=False)
        elif not checked.ok:
            bad += 1
            if not as_json:
                for line in checked.lines():
                    err.print(line, markup=False)
        elif not as_json and checked.job is not None:
            images = count(len(checked.images), "image")
            suites = count(len(checked.job.suites), "suite")
            said = f"{path}: valid (job {checked.job.name}: {images}, {suites})"
            out.print(said, markup=False)
    if as_json:
        print_json([service.validation_json(p, c) for p, c in checked_files])
    if bad:
        raise InputError(
            f"{bad} of {count(len(checked_files), 'job spec', 'job specs')} "
            + ("has mistakes" if bad == 1 else "have mistakes")
            + ("" if as_json else " (listed above)"),
            "fix each line named; a file is checked whole, so every mistake is listed at once",
        )


@app.command("runners")
def runners(
    job: str = JobArg,
    cpu_only: bool = typer.Option(False, "--cpu-only", help="As run with --cpu-only."),
    as_json: bool = JsonOption,
    catalog: Path = CatalogOption,
) -> None:
    """The self-hosted runner label sets the job needs (a workflow's runs-on)."""
    from ..catalog.core import load_job
    from ..services.jobs import runner_sets

    cat = load_catalog(catalog)
    sets = runner_sets(load_job(resolve_job_path(job), cat), cat, cpu_only)
    if as_json:
        print_json(sets)
        return
    for s in sets:
        out.print(f"[{', '.join(s['runs-on'])}]  {' '.join(s['images'])}", markup=False)
