"""valorch site build: the whole results store as a static site.

The session is used only to read (store/site_queries.py, store/matrix_store.py);
then every page is computed and rendered without I/O and handed back one at a time
as (relative path, text), for the command to write into a fresh directory.

A page of one run, check or image also carries a key: a digest of everything it is made
from. Given the keys of an earlier build of the same store (``Previous``, from the site's
manifest), such a page whose key is unchanged is not rendered again (its text is None:
the command keeps the earlier file, byte for byte what it would render); every other
page is made on every build. The run and check pages are begun in forked workers
(``_Ahead``) as soon as what they show is read, with ``gc.freeze()`` before each fork so a
worker's collector does not copy the inherited heap (docs/benchmarks.md, "Static site build").
The store's change log (store/changes.py) names the runs changed since the previous build:
a run page nothing changed keeps its key unread, and a verdict of the diff behind a step is
taken again only where something it reads changed (``still_holds``). The rest still comes
from a full read: every check page shows every run, and one nightly run changes them all.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import io
import multiprocessing
import operator
import os
import pickle
from collections import Counter
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

from sqlalchemy.orm import Session

from orchestrator import __version__
from orchestrator.errors import InputError
from orchestrator.ext.site import known as site_known
from orchestrator.ext.site import lists as site_lists
from orchestrator.ext.site import steps as site_steps
from orchestrator.ext.site.page_data import Site, ordered, version_cells, when
from orchestrator.ext.site.steps import Confirmations
from orchestrator.ext.site.summaries import Summaries
from orchestrator.ext.site.views import (
    ChangeV,
    Res,
    RunV,
    changes,
    flips,
    histories,
    load_runs,
    slug,
)
from orchestrator.matrix.document import Document, Header, freshness
from orchestrator.matrix.layouts import CatalogImage, components_table, observed_table
from orchestrator.matrix.libraries import images_for, libraries_table
from orchestrator.matrix.model import Observation, cell
from orchestrator.matrix.tiers import Policy
from orchestrator.regression import rule
from orchestrator.render.diff import diff_html
from orchestrator.services import evidence
from orchestrator.services.accept import joined
from orchestrator.services.budgets import streaks
from orchestrator.services.known_issues_status import IssueStatus, status_in
from orchestrator.store import changes as store_changes
from orchestrator.store import matrix_store, site_queries, triage_queries
from orchestrator.words import count

if TYPE_CHECKING:
    from orchestrator.regression.waivers import Waivers as KnownIssues

LAYOUTS = (
    "checks",
    "features",
    "seed-features",
    "since",
    "summary",
    "tiers",
    "components",
    "libraries",
)
STRICT = "\x00named-jobs"  # the matrices key of the named-jobs-only evidence (summary, tiers)
FRESH_DAYS = 7
_T = TypeVar("_T")
_R = TypeVar("_R")
# what a run page's worker gives back: (key, page); a check page's: (key, (page, plot))
_RunMade = tuple[str | None, str | None]
_CheckMade = tuple[str | None, tuple[str, str | None] | None]
# what the page workers forked next will see; empty but while their pool forks
_FORKED: dict[str, Any] = {}
MIN_FORKED = 64  # fewer pages than this are rendered here: forking would cost more
# the workers yield the CPU to this process, whose work is the longest path of a build
WORKER_NICE = 10
# runs from which the samples' summaries are made by a second process while this one reads
# the results (ext/site/summaries.py); below, starting it would cost more than it saves
SUMMARIES_FROM = 200


class Page(NamedTuple):
    """One file of the site."""

    path: str  # relative to the site's directory
    text: str | None  # None: unchanged since the previous build, whose file is kept
    key: str | None = None  # digest of what it is made from; None: made on every build


@dataclass(frozen=True)
class Previous:
    """What an earlier build into the same directory was made from (its manifest): each
    keyed page's key, the runs the store held, where the store's change log stood when it
    read, and the diff's verdicts on the shifts it confirmed (``confirmed``: "BASE..RUN" →
    check → kind, on the day ``today``)."""

    pages: Mapping[str, str]
    runs: frozenset[str]
    mark: store_changes.Mark | None = None
    confirmed: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    today: str = ""
    local: frozenset[str] | None = None  # the catalog's local images then

    @classmethod
    def read(cls, manifest: dict[str, Any], pages: Mapping[str, str], runs: list[str]) -> Previous:
        """From the manifest build wrote (``pages``: the keyed pages still there); what is
        not as build wrote it is taken as not there (a mark, a verdict is never a guess)."""
        today, local = manifest.get("today"), manifest.get("local")
        return cls(
            pages,
            frozenset(runs),
            store_changes.Mark.from_json(manifest.get("changes")),
            _confirmed(manifest.get("confirmed")),
            today if isinstance(today, str) else "",
            frozenset(local)
            if isinstance(local, list) and all(isinstance(a, str) for a in local)
            else None,
        )


def _confirmed(doc: object) -> dict[str, dict[str, str]]:
    """The diff's verdicts as build wrote them ("BASE..RUN" → check → kind); anything else
    in their place is none at all (each is made again)."""
    if not isinstance(doc, dict):
        return {}
    out = {}
    for pair, kinds in doc.items():
        if not (isinstance(pair, str) and ".." in pair and isinstance(kinds, dict)):
            return {}
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in kinds.items()):
            return {}
        out[pair] = kinds
    return out


def still_holds(
    previous: Previous,
    changed: frozenset[str] | None,
    runs: Mapping[str, Mapping[str, Any]],
    today: str,
) -> Mapping[str, Mapping[str, str]]:
    """The previous build's verdicts of ``valorch diff BASE RUN`` that still hold: what the
    diff reads is the two runs, the earlier runs of RUN's image on its host (its A/A noise),
    the checks and the acceptances, and the day; so a verdict holds where neither run
    changed since (``changed``: store/changes.py), nor a run of RUN's image and host that
    started no later, nothing that is not a run changed, and it is the same day. ``runs``:
    the stored runs' rows by id."""
    if changed is None or store_changes.OTHER in changed or previous.today != today:
        return {}
    # (image, host) → the earliest start of a changed run there
    first: dict[tuple[str, str], datetime] = {}
    for rid in changed:
        row = runs.get(rid)
        if row is None:  # not a run the site shows: nothing is taken as unchanged
            return {}
        env = (row["alias"], row["host"])
        if env not in first or row["started"] < first[env]:
            first[env] = row["started"]
    out = {}
    for pair, kinds in previous.confirmed.items():
        base, _, head = pair.partition("..")
        row = runs.get(head)
        if base in changed or head in changed or row is None or base not in runs:
            continue
        env = (row["alias"], row["host"])
        if env in first and first[env] <= row["started"]:
            continue
        out[pair] = kinds
    return out


def digest(obj: Any) -> str:
    """A key of plain data (strings, numbers, dates, lists, dicts, tuples, dataclasses):
    equal data, equal key within one valorch; any difference, another key. Pickled, not
    repr'd: five times quicker on a run's results; without pickle's memo ("fast" mode; the
    data holds no cycle), which writes an object met twice as a reference to the first, so
    that the bytes, and the key, would depend on which equal values are one object (a verdict
    read from the manifest is not the constant the diff returns) and not on the values alone."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=5)
    pickler.fast = True
    pickler.dump(obj)
    return hashlib.blake2b(out.getbuffer(), digest_size=16).hexdigest()


@functools.cache
def code_key() -> str:
    """valorch's version and every source file and template of the package: the pages a
    build makes are a function of these and of the store."""
    h = hashlib.blake2b(__version__.encode(), digest_size=16)
    root = Path(__file__).resolve().parents[2]
    for p in sorted(root.rglob("*")):
        if p.suffix in (".py", ".j2", ".css", ".json") and p.is_file():
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def store_key(session: Session) -> str:
    """Which store a build read (a digest of its URL: no password goes into the site)."""
    url = session.get_bind().engine.url.render_as_string(hide_password=False)
    return digest(url)


_RES_FIELDS = operator.attrgetter(*(s for s in Res.__slots__ if not s.startswith("_")))


def _run_page(work: dict[str, Any], run_id: str) -> _RunMade:
    """(key, page): the page None where the previous build has it with the same key. What
    a run's page is made from: its row (its triage in it), its results, and whether its
    image is a local one (the repro commands)."""
    site: Site = work["site"]
    run = site.runs[run_id]
    key = None
    if work["keyed"]:
        path = f"runs/{run_id}.html"
        if run_id in work["unchanged"] and (known := work["previous"].get(path)) is not None:
            return known, None  # nothing it is made from changed since (store/changes.py)
        results = [_RES_FIELDS(r) for r in run.results.values()]
        key = digest((run.row, results, run.row["alias"] in site.local))
        if work["previous"].get(path) == key:
            return key, None
    return key, site.run_page(run)


def _check_page(work: dict[str, Any], cid: str) -> _CheckMade:
    """(key, (page, plot)): None for both where the previous build has them with the same key.
    What a check's page and plot are made from: the check, its result in every run (the
    strips; the histories are made from these alone, views.histories), its histories'
    analyses as confirmed (levels, shifts, the shifts the diff did not confirm), its cells
    in the published versions, its confirmed shifts."""
    site: Site = work["site"]
    hist, shifts = work["per_check"].get(cid, []), work["shifts"].get(cid, [])
    key = None
    if work["keyed"]:
        # heads: each run, oldest first, as (its results, (id, environment, start))
        results = [
            (head, _RES_FIELDS(res))
            for rs, head in work["heads"]
            if (res := rs.get(cid)) is not None
        ]
        analysed = [(h.env, h.threshold, h.bigger_is_better, h.analysis, h.rejected) for h in hist]
        cells = version_cells(cid, work["versions"])
        key = digest((cid, site.checks[cid], results, analysed, cells, shifts))
        previous: Mapping[str, str] = work["previous"]
        if previous.get(f"checks/{slug(cid)}.html") == key and (
            not hist or previous.get(f"plots/{slug(cid)}.svg") == key
        ):
            return key, None
    return key, site.check_page(cid, hist, work["versions"], shifts)


def _in_worker(fn: Callable[[dict[str, Any], _T], _R], item: _T) -> _R:
    return fn(_FORKED, item)


class _Ahead(Generic[_T, _R]):
    """fn(work, item) over items, in order. With enough to do (the run and check pages of a large
    store are most of a build) and more than one of ``workers``, that many forked workers start on
    them at once, given ``work`` by being forked while it is in _FORKED, and this process goes on
    with its own work; their results are read back in the items' order, whichever worker finishes
    first, when the caller gets to them. Else fn runs here, item by item, as the caller reads."""

    def __init__(
        self,
        fn: Callable[[dict[str, Any], _T], _R],
        items: Sequence[_T],
        work: dict[str, Any],
        workers: int,
    ) -> None:
        self.fn, self.items, self.work = fn, items, work
        self.pool: Any = None
        self.pending: Iterator[_R] | None = None
        if (
            workers > 1  # one worker would be this process's work, done elsewhere
            and len(items) >= MIN_FORKED
            and "fork" in multiprocessing.get_all_start_methods()
        ):
            _FORKED.update(work)
            # what is here now is kept out of the garbage collector's passes (until _stop):
            # a pass in a worker would otherwise walk, and so copy, the whole inherited heap
            # (a third of the workers' CPU on a large store): gc.freeze's documented use
            gc.freeze()
            try:
                self.pool = multiprocessing.get_context("fork").Pool(
                    workers, initializer=os.nice, initargs=(WORKER_NICE,)
                )
            finally:
                _FORKED.clear()  # the workers have their copy
            self.pending = self.pool.imap(functools.partial(_in_worker, fn), items, chunksize=8)

    def __iter__(self) -> Iterator[_R]:
        if self.pending is None:
            for item in self.items:
                yield self.fn(self.work, item)
            return
        try:
            yield from self.pending
        finally:
            self.close()

    def close(self) -> None:
        """Stop the workers (at the end, or when the build stops before it)."""
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None


def _layout(
    layout: str,
    ev: evidence.Evidence,
    stored: _Stored,
    catalog: Sequence[CatalogImage],
    built: datetime,
) -> Document:
    inventories, all_runs = stored.inventories, stored.runs
    stale = cells = 0
    if layout not in ("components", "libraries"):
        infos = list(ev.columns)
        table = observed_table(
            layout,
            evidence.excuse(ev.observations, infos, stored.known_issues),
            infos,
            "features" if layout == "since" else "checks",
            "backends" if layout == "tiers" else "images",
            Policy(),
        )
        table, stale = evidence.stamp(table, built, FRESH_DAYS)
        cells = sum(1 for r in table.rows for c in r.cells if c.when)
    else:
        latest: dict[str, tuple[str, dict[str, str]]] = {}
        by_digest: dict[str, tuple[str, dict[str, str]]] = {}
        for run in sorted(all_runs.values(), key=lambda r: (r.row["started"], r.id)):
            if run.id in inventories:
                latest[run.row["alias"]] = (
                    run.id,
                    {c: v for c, (v, _s) in inventories[run.id].items()},
                )
                for key in (run.row.get("digest"), run.row.get("reference")):
                    if key:
                        by_digest[key] = latest[run.row["alias"]]
        if layout == "libraries":
            backends = {r.row["alias"]: r.row["backend"] for r in all_runs.values()}
            table = libraries_table(images_for(sorted(backends.items()), latest, chosen=False))
        else:
            table = components_table(catalog, latest, by_digest, stored.broken)
    source = [
        f"{count(len(ev.columns), 'environment (image on a host class)')}: each cell the newest "
        f"final verdict of its check there ({count(ev.runs_read, 'run')} read)",
        (
            "no named job has run here: these claims come from named jobs only (valorch run --job FILE)"
            if ev.empty
            else "ad-hoc runs only: no named job has run"
            if ev.special_used
            else "named jobs"
        ),
        freshness(stale, cells, FRESH_DAYS),
        f"valorch {__version__}",
    ]
    newest = ev.newest.strftime("%Y-%m-%d") if ev.newest else "never"
    header = Header("unpublished", newest, tuple(source), stale, FRESH_DAYS)
    return Document(header, table, {"layout": layout})


def _cell_verdicts(ev: evidence.Evidence) -> dict[tuple[str, str], str]:
    """(check, column) → the verdict of its matrix cell (every attempt of the run that speaks
    for it), decided by ``matrix.model.cell`` as every matrix decides it (cpu-only included)."""
    attempts: dict[tuple[str, str], list[Observation]] = {}
    for o in ev.observations:
        attempts.setdefault((o.check, o.column), []).append(o)
    return {key: cell(group).verdict for key, group in attempts.items()}


def _version_side(name: str, doc: dict[str, Any]) -> rule.Side:
    obs = []
    for r in doc["rows"]:
        for col, c in r["cells"].items():
            for i, status in enumerate(c["statuses"] or [c["verdict"]]):
                if status:
                    obs.append(
                        rule.Obs(
                            env=col, check=r["key"], status=str(status), attempt=i + 1, version=None
                        )
                    )
    return rule.Side(
        name, "matrix", tuple(obs), (), tuple(sorted((doc.get("digests") or {}).items())), ()
    )


@dataclass
class Built:
    """The pages of a build, and whether an earlier build's pages could be kept (why not)."""

    pages: Iterator[Page]
    runs: list[str]
    full_because: str = ""  # why every page is made again, where a previous build was given
    mark: store_changes.Mark | None = None  # where the store's change log stood when read
    changed: int | None = None  # how many runs changed since the previous build (if known)
    confirmations: Confirmations = field(default_factory=Confirmations)
    today: str = ""


def build_pages(  # noqa: PLR0913 - one argument per option of valorch site build
    session: Session,
    *,
    catalog: Sequence[CatalogImage] = (),
    local: frozenset[str] = frozenset(),
    qualify: Sequence[tuple[str, str]] = (),
    built: datetime | None = None,
    workers: int | None = None,
    known_issues: KnownIssues | None = None,
    limits: Limits | None = None,
    previous: Previous | None = None,
) -> Built:
    """Every page of the site, as the module says (an empty store is bad input: exit 2).
    With ``previous`` (empty for a full build that writes a manifest) every run, check, image
    and qualification page has its key; a store that lost a run of the previous build has
    every page made again."""
    built = built or datetime.now()
    mark = store_changes.mark(session)  # before anything is read: what it misses is after
    run_rows = site_queries.runs(session)
    _shaped(run_rows)
    by_id = {r["id"]: r for r in run_rows}
    full_because = ""
    if previous is not None and (gone := previous.runs - by_id.keys()):
        # pruned, or another store: what was built from those runs is not kept
        full_because = f"{count(len(gone), 'run')} of the previous build no longer stored"
        previous = Previous({}, frozenset())
    changed = None
    if previous is not None and previous.mark is not None and mark is not None:
        changed = store_changes.since(session, previous.mark)
        # a log that does not account for the store (one put in the other's place, a log
        # begun after runs were added) tells nothing: every run is taken as changed
        if mark.seq < previous.mark.seq or not by_id.keys() - previous.runs <= changed:
            changed = None
    today = date.today().isoformat()
    kept: Mapping[str, str] = previous.pages if previous is not None else {}
    # what a page worker needs to keep a page: keyed only where a manifest is written; the
    # runs whose page nothing can have changed since (not in the log since, nothing but runs
    # changed, their image local or not as it was: the repro commands) keep theirs unread
    unchanged: frozenset[str] = frozenset()
    before = previous.local if previous is not None else None
    if changed is not None and store_changes.OTHER not in changed and before is not None:
        unchanged = frozenset(
            r["id"]
            for r in run_rows
            if r["id"] not in changed and (r["alias"] in local) == (r["alias"] in before)
        )
    keep = {"previous": kept, "keyed": previous is not None, "unchanged": unchanged}
    confirmations = Confirmations(
        still_holds(previous, changed, by_id, today) if previous is not None else {}
    )
    n = workers if workers is not None else min(4, os.cpu_count() or 1)
    detail: list[_Ahead[str, Any]] = []  # the run and check pages, once begun
    try:
        site, stored = _read(
            session,
            run_rows,
            local,
            built,
            (n, keep, detail),
            known_issues,
            limits or Limits(),
            confirmations,
        )
    except BaseException:
        _stop(*detail)
        raise
    pages = _pages(stored, site, (detail[0], detail[1]), catalog, qualify, built, keep)
    return Built(
        pages,
        sorted(stored.runs),
        full_because,
        mark,
        len(changed - {store_changes.OTHER}) if changed is not None else None,
        confirmations,
        today,
    )


def _read(
    session: Session,
    run_rows: list[dict[str, Any]],
    local: frozenset[str],
    built: datetime,
    ahead: tuple[int, dict[str, Any], list[_Ahead[str, Any]]],
    known_issues: KnownIssues | None,
    limits: Limits,
    confirmations: Confirmations,
) -> tuple[Site, _Stored]:
    """Everything the pages need, read from the store; the run and check pages begun
    (``ahead``: how many workers, what they need to keep a page, and where the pages begun
    go) as soon as what they show is read, while this process goes on."""
    workers, keep, detail = ahead
    pk_checks = site_queries.checks(session)
    # every run with its results reduced (the samples' summaries made by a second process
    # while this one reads, on a large store) and its triage (each red result says why)
    made = Summaries(
        site_queries.passing_samples_source(session)
        if len(run_rows) >= SUMMARIES_FROM and workers > 1
        else None
    )
    try:
        with _no_cycles():
            runs = load_runs(run_rows, pk_checks, site_queries.results(session), made)
    finally:
        made.close()
    for rid, why in triage_queries.stored_all(session).items():
        if rid in runs:
            runs[rid].row["triage"] = why
    checks = _checks_by_id(pk_checks)
    site = Site(runs, checks, local, built.strftime("%Y-%m-%d %H:%M"))
    # begun now: this process goes on with the histories and confirmations meanwhile
    detail.append(_Ahead(_run_page, list(runs), {**keep, "site": site}, workers))
    versions = [
        (mv, doc)
        for mv in matrix_store.versions(session)
        if (doc := matrix_store.load(session, mv.version)) is not None
    ]
    with _no_cycles():  # each check's direction as its newest version has it
        per_check = histories(runs, {cid: bool(c["bigger_is_better"]) for cid, c in checks.items()})
    # only what `valorch diff` calls a change
    found = site_steps.confirmed(session, changes(per_check), per_check, confirmations)
    shifts_of: dict[str, list[ChangeV]] = {}
    for c in found:
        shifts_of.setdefault(c.check, []).append(c)
    work = dict(
        keep,
        site=site,
        per_check=per_check,
        versions=[(mv.version, doc) for mv, doc in versions],
        shifts=shifts_of,
        # made once for every check's key
        heads=[(r.results, (r.id, r.env, r.row["started"])) for r in site.in_order]
        if keep["keyed"]
        else [],
    )
    detail.append(_Ahead(_check_page, sorted(checks), work, workers))
    # the matrices' evidence: each cell the newest final verdict of its check
    # (services/evidence.py); all runs, named jobs only (STRICT), and each job's
    matrices: dict[str | None, evidence.Evidence] = {
        None: evidence.gather(session),
        STRICT: evidence.gather(session, fallback_special=False),
    }
    for job in sorted({r["job"] for r in run_rows}):
        matrices[job] = evidence.gather(session, job=job, include_special=True)
    close_after = (limits.close_runs, limits.close_days)
    stored = _Stored(
        runs,
        site_queries.inventories(session),
        versions,
        matrices,
        per_check,
        found,
        matrix_store.broken_imports(session),
        joined(session, known_issues),  # the matrices excuse with the store's waivers too
        status_in(session, known_issues, *close_after) if known_issues else None,
        close_after,
        streaks(run_rows, site_queries.tasks(session), limits.budget_runs),
    )
    return site, stored


def _shaped(run_rows: list[dict[str, Any]]) -> None:
    """There are runs (else bad input: exit 2), and their meta and hosts' specs are what the
    pages read them as (store/blobs.py), else the store is damaged (exit 3 naming the rows;
    ``db check`` lists them all), never a traceback halfway through the pages."""
    if not run_rows:
        raise InputError(
            "the results database has no runs: there is nothing to publish",
            "run something first (valorch run --image host), or pass --db with the right database",
        )
    from orchestrator.errors import InfrastructureError
    from orchestrator.store import blobs

    found: list[str] = []
    specs: dict[str, list[str]] = {}
    for row in run_rows:
        found += blobs.run_meta(row["meta"] or {}, f"run {row['id']} meta")
        key = str(row["host"])
        if key not in specs:
            specs[key] = blobs.host_spec(row["host_spec"] or {}, f"host {key} spec")
            found += specs[key]
        if len(found) >= 3:
            break
    if found:
        raise InfrastructureError(
            f"damaged store: {'; '.join(found[:3])}",
            "valorch db check lists every damaged row; restore the store or remove those runs",
        )


@contextlib.contextmanager
def _no_cycles() -> Iterator[None]:
    """The cyclic garbage collector paused while the results are read and reduced: it would
    walk the growing heap again and again (a fifth of the read of a 300,000-result store),
    and what is made there (results, histories: dicts, lists, tuples) holds no cycle. What
    was made is then frozen (gc.freeze: left out of the collector's passes until the build
    ends, _stop), else the first pass after would walk all of it (0.4 s)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        gc.freeze()
    finally:
        if enabled:
            gc.enable()


def _stop(*pages: _Ahead[Any, Any]) -> None:
    """Stop the page workers, and give what was frozen back to the collector."""
    for p in pages:
        p.close()
    gc.unfreeze()


@dataclass(frozen=True)
class Limits:
    """When a known issue can close (its checks green in ``close_runs`` runs over
    ``close_days`` days), and how many runs in a row over its time budget flag a suite."""

    close_runs: int = 3
    close_days: float = 14
    budget_runs: int = 3


@dataclass(frozen=True)
class _Stored:
    """What build read from the store, and the changes found in it: all the pages need."""

    runs: dict[str, RunV]
    inventories: dict[str, Any]
    versions: list[tuple[Any, dict[str, Any]]]
    matrices: dict[str | None, evidence.Evidence]
    per_check: dict[str, list[Any]]
    found: list[ChangeV]
    # run → component → import error
    broken: dict[str, dict[str, str]] = field(default_factory=dict)
    # the waivers of the file and the store: the failures they excuse show as ⚑ waived
    known_issues: KnownIssues | None = None
    # each known issue: the runs it excused, whether it can close (known-issues page)
    known_status: list[IssueStatus] | None = None
    close_after: tuple[int, float] = (3, 14)  # runs, days: when an issue can close
    over_budget: list[str] = field(default_factory=list)  # suites over budget K runs in a row


def _checks_by_id(pk_checks: dict[int, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each check once, with every version it had (its other fields from the newest)."""
    checks: dict[str, dict[str, Any]] = {}
    for c in sorted(pk_checks.values(), key=lambda c: (c["check_id"], c["version"])):
        info = checks.setdefault(c["check_id"], {**c, "versions": []})
        info["versions"].append(c["version"])
        info.update({k: c[k] for k in ("feature", "kind", "library", "unit", "bigger_is_better")})
    return checks


def _matrix_pages(
    site: Site, stored: _Stored, catalog: Sequence[CatalogImage], built: datetime
) -> Generator[Page, None, list[dict[str, Any]]]:
    """Every layout of the newest evidence, then each job's matrix; returns what each job's
    matrix says (its cells' verdicts, from the runs its cells came from) for the index."""
    matrices, runs = stored.matrices, stored.runs
    if not matrices[None].empty:
        for layout in LAYOUTS:
            ev = matrices[STRICT] if layout in ("summary", "tiers") else matrices[None]
            yield Page(
                f"matrix/{layout}.html", site.matrix(_layout(layout, ev, stored, catalog, built))
            )
    jobs = []
    for job in sorted({r.row["job"] for r in runs.values()}):
        ev = matrices[job]
        if ev.empty:
            continue
        yield Page(
            f"matrix/job-{slug(job)}.html",
            site.matrix(_layout("checks", ev, stored, catalog, built), f" — job {job}"),
        )
        jobs.append(
            {
                "name": job,
                "slug": slug(job),
                "runs": len({o.run_id for o in ev.observations}),
                "counts": ordered(Counter(_cell_verdicts(ev).values())),
                "newest": when(max(runs[o.run_id].row["started"] for o in ev.observations)),
            }
        )
    return jobs


def _jobs_behind(doc: dict[str, Any], runs: dict[str, RunV]) -> set[str]:
    """The jobs of the stored runs behind a published version's cells."""
    return {
        runs[r].row["job"]
        for row in doc.get("rows", ())
        for cell in row.get("cells", {}).values()
        for r in cell.get("runs") or ()
        if r in runs
    }


def related(a: dict[str, Any], b: dict[str, Any], runs: dict[str, RunV]) -> bool:
    """Whether two published versions are releases of one thing, so a diff of them means
    something: the same layout, the same --job, runs of a common job behind their cells (or,
    where the runs are gone from the store, a column in common)."""
    pa, pb = a.get("params") or {}, b.get("params") or {}
    if a.get("layout") != b.get("layout") or pa.get("job") != pb.get("job"):
        return False
    ja, jb = _jobs_behind(a, runs), _jobs_behind(b, runs)
    if ja and jb:
        return bool(ja & jb)
    return bool(set(a.get("columns") or ()) & set(b.get("columns") or ()))


def _version_pages(
    site: Site, versions: list[tuple[Any, dict[str, Any]]]
) -> Generator[Page, None, list[dict[str, Any]]]:
    """Each published version's matrix, and the diff from the newest earlier version of the same
    thing (related()); returns the versions' views (for the index)."""
    version_views: list[dict[str, Any]] = []
    version_docs: list[tuple[str, Any]] = []
    for mv, doc in versions:
        yield Page(f"versions/{slug(mv.version)}.html", site.matrix(Document.from_dict(doc)))
        prev = next(((n, d) for n, d in reversed(version_docs) if related(d, doc, site.runs)), None)
        view = {
            "name": mv.version,
            "slug": slug(mv.version),
            "published": when(mv.published),
            "last_verified": mv.last_verified.strftime("%Y-%m-%d"),
            "layout": doc.get("layout", ""),
            "prev": prev[0] if prev else "",
            "diff": "",
        }
        if prev is not None:
            view["diff"] = f"{slug(prev[0])}..{slug(mv.version)}"
            report = rule.compare(_version_side(prev[0], prev[1]), _version_side(mv.version, doc))
            yield Page(f"diffs/{view['diff']}.html", diff_html(report))
        version_views.append(view)
        version_docs.append((mv.version, doc))
    return version_views


def _detail_pages(
    stored: _Stored,
    run_pages: _Ahead[str, _RunMade],
    check_pages: _Ahead[str, _CheckMade],
    kept: Mapping[str, str],
) -> Iterator[Page]:
    """One page per run, and per check with its plot, as the workers rendered them (or
    kept from the previous build)."""
    for rid, (key, html) in zip(run_pages.items, run_pages, strict=True):
        yield Page(f"runs/{rid}.html", html, key)
    for cid, (key, made) in zip(check_pages.items, check_pages, strict=True):
        page, plot = f"checks/{slug(cid)}.html", f"plots/{slug(cid)}.svg"
        if made is None:  # unchanged: the page, and its plot where it had one
            yield Page(page, None, key)
            if plot in kept:
                yield Page(plot, None, key)
            continue
        yield Page(page, made[0], key)
        if made[1]:
            yield Page(plot, made[1], key)


def _pages(
    stored: _Stored,
    site: Site,
    detail: tuple[_Ahead[str, _RunMade], _Ahead[str, _CheckMade]],
    catalog: Sequence[CatalogImage],
    qualify: Sequence[tuple[str, str]],
    built: datetime,
    keep: dict[str, Any],
) -> Iterator[Page]:
    """The matrices, the versions, the run, check, image and qualification pages, then the
    lists and the index, in that order; the page workers stop whatever happens."""
    kept, keyed = keep["previous"], keep["keyed"]
    try:
        jobs = yield from _matrix_pages(site, stored, catalog, built)
        version_views = yield from _version_pages(site, stored.versions)
        # the pages that follow are made now, while the workers finish theirs
        rest = list(_list_pages(stored, site, qualify, jobs, version_views, kept, keyed))
        yield from _detail_pages(stored, *detail, kept)
        yield from rest
    finally:
        _stop(*detail)


def _list_pages(
    stored: _Stored,
    site: Site,
    qualify: Sequence[tuple[str, str]],
    jobs: list[dict[str, Any]],
    version_views: list[dict[str, Any]],
    kept: Mapping[str, str],
    keyed: bool,
) -> Iterator[Page]:
    """The image and qualification pages (kept where unchanged), then the lists and the index."""
    runs, found, checks = stored.runs, stored.found, site.checks
    by_image: dict[str, list[RunV]] = {}
    for run in runs.values():
        by_image.setdefault(run.row["alias"], []).append(run)
    for alias, image_runs in sorted(by_image.items()):
        path = f"images/{slug(alias)}.html"
        key = None
        if keyed:  # what its page is made from: its runs' rows and verdicts, their inventories
            rows = sorted(
                (r.row["started"], r.id, r.row, sorted(r.counts.items())) for r in image_runs
            )
            inventories = [
                (r.id, stored.inventories[r.id])
                for r in sorted(image_runs, key=lambda r: r.id)
                if r.id in stored.inventories
            ]
            key = digest((alias, rows, inventories))
        if key is not None and kept.get(path) == key:
            yield Page(path, None, key)
        else:
            yield Page(path, site.image_page(alias, image_runs, stored.inventories), key)
    for name, html in qualify:
        path = f"qualify/{slug(name)}.html"
        key = digest(html) if keyed else None
        yield Page(path, None if key is not None and kept.get(path) == key else html, key)

    ordered_runs = sorted(runs.values(), key=lambda r: (r.row["started"], r.id), reverse=True)
    yield Page("runs/index.html", site_lists.runs_page(site, ordered_runs))
    # per check: the libraries evidence named in the matrix's cells, and its cells' verdicts
    ran: dict[str, dict[str, None]] = {}
    for o in stored.matrices[None].observations:
        if o.library:
            ran.setdefault(o.check, {})[o.library] = None
    latest_verdicts: dict[str, Counter[str]] = {}
    for (check, _column), v in _cell_verdicts(stored.matrices[None]).items():
        latest_verdicts.setdefault(check, Counter())[v] += 1
    shifts = Counter(c.check for c in found)
    yield Page(
        "checks/index.html", site_lists.checks_page(site, checks, ran, latest_verdicts, shifts)
    )
    yield Page("images/index.html", site_lists.images_page(site, by_image))
    flipped = flips(runs)
    # what the index shows beyond the store's figures: the suites over their time budget
    # for K runs in a row, the known issues' summary
    extra: dict[str, Any] = {"over_budget": stored.over_budget}
    if (known := stored.known_status) is not None and stored.known_issues is not None:
        today = stored.known_issues.today
        yield Page("known-issues.html", site_known.page(site, known, today, *stored.close_after))
        extra["known_issues"] = {
            "total": len(known),
            "expired": sum(1 for s in known if s.issue.expired(today)),
            "can_close": sum(1 for s in known if s.can_close),
        }
    yield Page("changes.html", site_lists.changes_page(site, found, flipped, len(runs)))
    figures = {**site_lists.stats(runs, by_image, checks), "extra": extra}
    layouts = LAYOUTS if not stored.matrices[None].empty else ()
    yield Page(
        "index.html",
        site_lists.index_page(site, figures, version_views, layouts, jobs, found, qualify, flipped),
    )
