"""valorch site build --out DIR: the results store as a static site (no server, no network).
One writer thread writes the pages in order, so its system calls overlap the making of the
next pages (docs/benchmarks.md, "Static site build")."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import tempfile
from collections import deque
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from orchestrator import outfile, satellites
from orchestrator.commands import flags
from orchestrator.commands.common import (
    CatalogOption,
    CloseDaysOption,
    CloseRunsOption,
    DbOption,
    err,
    load_catalog,
    sessions,
)
from orchestrator.errors import InputError, ValorchError
from orchestrator.words import count

if TYPE_CHECKING:
    from orchestrator.ext.site.service import Page, Previous

app = typer.Typer(help="The static results site.", no_args_is_help=True)
# a directory holding it was made by `valorch site build` (and may be replaced)
MARKER = ".valorch-site"
# the marker is the build's manifest (JSON): what each page was made from (service.Page.key)
MANIFEST = 1


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


def _keep(old: Path, new: Path) -> None:
    """An unchanged page of the previous build, into the new one: linked (the same file,
    its time of modification untouched), copied where the file system cannot link."""
    try:
        os.link(old, new, follow_symlinks=False)
    except OSError:
        shutil.copy2(old, new, follow_symlinks=False)


def _write_all(
    pages: Iterable[Page], tmp: Path, old: Path, keys: dict[str, str]
) -> tuple[int, int]:
    """Each page written under tmp, in order, by one writer thread: its system calls (a new
    file, then 100 kB of text for a run page) overlap the making of the next pages, which
    on a large store is the longest path of the build; a page the build kept (text None)
    is taken from ``old``. A write that fails is raised here (OSError) as soon as it is
    seen. Each page's key is noted in ``keys`` (the manifest's). Returns how many pages
    there are, and how many were written."""
    made: set[Path] = set()
    n = written = 0
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="site-writer") as writer:
        pending: deque[Future[Any]] = deque()
        for page in pages:
            if page.key is not None:
                keys[page.path] = page.key
            path = tmp / page.path
            if path.parent not in made:
                path.parent.mkdir(parents=True, exist_ok=True)
                made.add(path.parent)
            if page.text is None:
                pending.append(writer.submit(_keep, old / page.path, path))
            else:
                pending.append(writer.submit(path.write_text, page.text, encoding="utf-8"))
                written += 1
            n += 1
            while pending and pending[0].done():
                pending.popleft().result()
        for f in pending:
            f.result()
    return n, written


def _previous(out: Path, code: str, store: str) -> tuple[Previous, str]:
    """What the earlier build in ``out`` was made from, where it can be built on: the same
    valorch (version, code and templates) and the same store; else (nothing, why not)."""
    from orchestrator.ext.site.service import Previous

    none, no_manifest = Previous({}, frozenset()), "the previous build left no manifest"
    try:
        manifest = json.loads((out / MARKER).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return none, ""
    except (OSError, ValueError):
        return none, no_manifest
    if not isinstance(manifest, dict) or manifest.get("manifest") != MANIFEST:
        return none, no_manifest
    if manifest.get("code") != code:
        return none, "another valorch (version, code or templates) built it"
    if manifest.get("store") != store:
        return none, "it was built from another store"
    pages = manifest.get("pages") or {}
    runs = manifest.get("runs") or []
    if not isinstance(pages, dict) or not isinstance(runs, list):
        return none, no_manifest
    # only what is still there, as a file of its own, can be kept (never a link planted
    # there: what it points to would be published)
    present = {p: k for p, k in pages.items() if isinstance(k, str) and _plain_file(out / p)}
    return Previous.read(manifest, present, [str(r) for r in runs]), ""


def _plain_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _built_at() -> datetime | None:
    """SOURCE_DATE_EPOCH (reproducible-builds.org) where set: the time the pages say they
    were built, so two builds of one store can be compared byte for byte."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not epoch:
        return None
    try:
        return datetime.fromtimestamp(int(epoch))
    except (ValueError, OverflowError, OSError):
        raise InputError(
            f"SOURCE_DATE_EPOCH={epoch!r} is not a time in seconds since 1970",
            "set it to a whole number of seconds (date +%s), or unset it",
        ) from None


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


_OUT = typer.Option(
    ...,
    "--out",
    "-o",
    callback=flags.OUT_SITE_DIR,
    help="Directory of the site (replaced as a whole; the pages an earlier build of the "
    "same store made from unchanged data are kept, byte for byte).",
)

_QUALIFY_DIR = typer.Option(
    None,
    "--qualify-dir",
    help="Where the qualify reports are: every directory in it (two levels deep, or it "
    "itself) holding report.html and qualify.json, as qualify --out-dir writes them "
    "[default: ./results].",
)

_KNOWN_ISSUES = typer.Option(
    None,
    "--known-issues",
    help="Known-issues YAML: a failure a live entry excuses shows as ⚑ waived on the "
    "matrix pages, as in qualify and diff; a known-issues page says which have expired, "
    "which can close and the runs each excused.",
)

_BUDGET_RUNS = typer.Option(
    3,
    "--budget-runs",
    min=1,
    max=10_000,
    help="Flag on the index a suite that took longer than its time budget (its own or its "
    "tier's) in this many stored runs in a row.",
)

_FULL = typer.Option(
    False,
    "--full",
    help="Make every page again. Without it, a build into the site of an earlier build of "
    "the same store keeps the pages whose inputs did not change (the same bytes).",
)


@app.command("build")
def build(
    out: Path = _OUT,
    qualify_dir: Path = _QUALIFY_DIR,
    db: str = DbOption,
    catalog: Path = CatalogOption,
    known_issues: Path = _KNOWN_ISSUES,
    close_runs: int = CloseRunsOption,
    close_days: float = CloseDaysOption,
    budget_runs: int = _BUDGET_RUNS,
    full: bool = _FULL,
) -> None:
    """Build the static site: index, matrices, one page per image, check and run, trends, changes."""
    out = _target(out)
    built = _built_at()
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
    try:
        with sessions(db)() as session:
            code, store = service.code_key(), service.store_key(session)
            previous, why_full = (
                (service.Previous({}, frozenset()), "") if full else _previous(out, code, store)
            )
            made = service.build_pages(
                session,
                catalog=images,
                local=local,
                qualify=_qualify_reports(qualify_dir),
                built=built,
                known_issues=issues,
                limits=service.Limits(close_runs, close_days, budget_runs),
                previous=previous,
            )
        why_full = made.full_because or why_full
        keys: dict[str, str] = {}
        n, written = _write_all(made.pages, tmp, out, keys)
        manifest = {
            "built_by": "valorch site build",
            "manifest": MANIFEST,
            "code": code,
            "store": store,
            "runs": made.runs,
            "pages": keys,
            "changes": made.mark.to_json() if made.mark else None,
            "confirmed": made.confirmations.made,
            "today": made.today,
            "local": sorted(local),
        }
        (tmp / MARKER).write_text(json.dumps(manifest, indent=0, sort_keys=True), encoding="utf-8")
        os.chmod(tmp, 0o755)
        _swap(tmp, out)
    except OSError as exc:
        raise _write_error(out, exc, "into") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        # a failed build leaves no directory it made
        for d in reversed(made_dirs if not out.exists() else ()):
            with contextlib.suppress(OSError):
                d.rmdir()
    if why_full:
        err.print(f"made every page again: {why_full}", markup=False)
    if written < n:
        since = (
            f"; {count(made.changed, 'run')} changed since the previous build"
            if made.changed is not None
            else ""
        )
        err.print(
            f"wrote {written} of {n} pages to {out}, kept {n - written} unchanged{since} "
            f"(open {out / 'index.html'})",
            markup=False,
        )
    else:
        err.print(f"wrote {n} pages to {out} (open {out / 'index.html'})")
