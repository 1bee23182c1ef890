"""valorch site build --out DIR: the results store as a static site (no server, no network)."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from collections import deque
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import typer

from orchestrator import outfile, satellites
from orchestrator.commands import flags
from orchestrator.commands.common import CatalogOption, DbOption, err, load_catalog, sessions
from orchestrator.errors import InputError, ValorchError

app = typer.Typer(help="The static results site.", no_args_is_help=True)
MARKER = (
    ".valorch-site"  # a directory holding it was made by `valorch site build` (and may be replaced)
)


def _report_dirs(root: Path) -> list[Path]:
    """Directories under root (root included, two levels down) that hold a qualify report:
    report.html beside the qualify.json that `valorch qualify` writes (or named qualify-*)."""
    found = []
    for path in (root / "report.html", *root.glob("*/report.html"), *root.glob("*/*/report.html")):
        d = path.parent
        if path.is_file() and ((d / "qualify.json").is_file() or d.name.startswith("qualify-")):
            found.append(d)
    return sorted(set(found), key=lambda d: (d.stat().st_mtime, str(d)))


def _qualify_reports(directory: Path | None) -> list[tuple[str, str]]:
    """The qualify reports under --qualify-dir (default ./results), whatever their
    directories are called (`qualify --out-dir` names them), oldest first. An explicit
    --qualify-dir that holds none is warned about."""
    root = directory or Path("results")
    dirs = _report_dirs(root) if root.is_dir() else []
    if directory is not None and not dirs:
        err.print(
            f"warning: --qualify-dir {directory} holds no qualification report (a directory "
            "with report.html and qualify.json, as `valorch qualify --out-dir DIR` writes): "
            "the site has none",
            markup=False,
        )
    out, names = [], set()
    for d in dirs:
        name = d.name if d == root else "-".join(d.relative_to(root).parts)
        name = name if name not in names else "-".join(d.parts[-3:])
        names.add(name)
        path = d / "report.html"
        try:
            out.append((name, path.read_text(encoding="utf-8")))
        except OSError as exc:
            err.print(f"[yellow]skipped {path}: {exc.strerror}[/yellow]")
        except UnicodeDecodeError:
            err.print(f"[yellow]skipped {path}: not UTF-8 text[/yellow]")
    return out


def _target(out: Path) -> Path:
    out = out.expanduser().absolute()
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} is a file, not a directory", "pass a directory for the site")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).exists():
        raise InputError(
            f"--out {out} is a non-empty directory that valorch did not build; it is not replaced",
            "pass a new or empty directory, or the directory of an earlier `valorch site build`",
        )
    return out


def _write_all(pages: Iterable[tuple[str, str]], tmp: Path) -> int:
    """Each page written under tmp, in order, by one writer thread: its system calls (a new
    file, then 100 kB of text for a run page) overlap the making of the next pages, which
    on a large store is the longest path of the build. A write that fails is raised here
    (OSError) as soon as it is seen. Returns how many pages were written."""
    made: set[Path] = set()
    n = 0
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="site-writer") as writer:
        pending: deque[Future[int]] = deque()
        for rel, text in pages:
            path = tmp / rel
            if path.parent not in made:
                path.parent.mkdir(parents=True, exist_ok=True)
                made.add(path.parent)
            pending.append(writer.submit(path.write_text, text, encoding="utf-8"))
            n += 1
            while pending and pending[0].done():
                pending.popleft().result()
        for f in pending:
            f.result()
    return n


def _write_error(out: Path, exc: OSError, where: str) -> ValorchError:
    """A full disk is the machine's (exit 3: free space, and the old site is still there);
    anything else is the ``--out`` the user passed (exit 2)."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return outfile.error(out, exc, f"the site {out}")
    return InputError(
        f"cannot write the site {where} {out}: {exc.strerror}",
        "pass --out with a directory you can write",
    )


def _swap(tmp: Path, out: Path) -> None:
    """Put the new site in place: the old one is renamed aside, the new one renamed in,
    then the old one removed. A reader sees the old site or the new one, never half of one."""
    old = None
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.rename(out, old / "site")
    os.rename(tmp, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


@app.command("build")
def build(
    out: Path = typer.Option(
        ...,
        "--out",
        "-o",
        callback=flags.OUT_SITE_DIR,
        help="Directory of the site (replaced as a whole).",
    ),
    qualify_dir: Path = typer.Option(
        None,
        "--qualify-dir",
        help="Where the qualify reports are: every directory in it (two levels deep, or it "
        "itself) holding report.html and qualify.json, as qualify --out-dir writes them "
        "[default: ./results].",
    ),
    db: str = DbOption,
    catalog: Path = CatalogOption,
    known_issues: Path = typer.Option(
        None,
        "--known-issues",
        help="Known-issues YAML: a failure a live entry excuses shows as ⚑ known issue on the "
        "matrix pages, as in qualify and diff; a known-issues page says which have expired, "
        "which can close and the runs each excused.",
    ),
    close_runs: int = typer.Option(
        3,
        "--close-runs",
        min=1,
        max=10_000,
        help="A known issue can close when its checks passed in at least this many runs of "
        "every matching environment (as known-issues status --runs).",
    ),
    close_days: float = typer.Option(
        14,
        "--close-days",
        callback=flags.number("--close-days", 0, 3660, lo_open=True),
        help="... over the last this many days (as known-issues status --days).",
    ),
    budget_runs: int = typer.Option(
        3,
        "--budget-runs",
        min=1,
        max=10_000,
        help="Flag on the index a suite that took longer than its time budget (its own or its "
        "tier's) in this many stored runs in a row.",
    ),
) -> None:
    """Build the static site: index, matrices, one page per image, check and run, trends, changes."""
    out = _target(out)
    satellites.require("site", "valorch site build")
    from orchestrator.ext.site import service
    from orchestrator.matrix.layouts import CatalogImage
    from orchestrator.services.run import load_known_issues

    issues = load_known_issues(known_issues)  # a bad file is exit 2 before anything is written

    cat = load_catalog(catalog)  # a bad --catalog is exit 2 before anything is written
    images = [CatalogImage(i.alias, i.reference, i.digest, dict(i.components)) for i in cat.images]
    local = frozenset(i.alias for i in cat.images if i.local)
    made_dirs = [p for p in reversed((out.parent, *out.parent.parents)) if not p.exists()]
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
    except OSError as exc:
        raise _write_error(out, exc, "next to") from None
    n = 0
    try:
        with sessions(db)() as session:
            pages = service.build(
                session,
                catalog=images,
                local=local,
                qualify=_qualify_reports(qualify_dir),
                known_issues=issues,
                limits=service.Limits(close_runs, close_days, budget_runs),
            )
        n = _write_all(pages, tmp)
        (tmp / MARKER).write_text("built by valorch site build\n", encoding="utf-8")
        os.chmod(tmp, 0o755)
        _swap(tmp, out)
    except OSError as exc:
        raise _write_error(out, exc, "into") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        for d in reversed(
            made_dirs if not out.exists() else ()
        ):  # a failed build leaves no directory it made
            with contextlib.suppress(OSError):
                d.rmdir()
    err.print(f"wrote {n} pages to {out} (open {out / 'index.html'})")
