"""Reads and writes of the results store. Every function takes the session (or, for a
read in Core, the connection) it works in; committing is the caller's business. The ORM
(store/models.py) is imported when a function is called, never with this module."""

from __future__ import annotations

import fnmatch
import math
import uuid
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import ColumnElement, Subquery, Table, and_, func, select, text

from .. import __version__
from ..bounds import EPOCH_ISO
from ..errors import InfrastructureError
from ..plaintext import visible
from . import tables

if TYPE_CHECKING:  # the vocabulary's pydantic models: a listing never builds one
    from sqlalchemy.engine import Connection
    from sqlalchemy.orm import Session

    from ..spec import CheckResult, HostSpec, ImageSpec, SuiteRef
    from .models import Base, Image, Result, Run

_Row = TypeVar("_Row", bound="Base")
_T = TypeVar("_T")


def chunks(items: Sequence[_T], size: int = 500) -> Iterator[Sequence[_T]]:
    """``items`` in slices of ``size``: IN lists and executemany batches a database takes."""
    for i in range(0, len(items), size):
        yield items[i : i + size]


def now() -> datetime:
    """The time a row is stamped with: UTC, naive. A clock before valorch's epoch would
    store a time that ``db check`` and every import refuse (bounds.EPOCH_ISO: the one rule
    for valid times), so it is an error here (exit 3) rather than a row nothing reads back."""
    when = datetime.now(timezone.utc).replace(tzinfo=None)
    if when < datetime.fromisoformat(EPOCH_ISO):
        raise InfrastructureError(
            f"this machine's clock says {when.isoformat(timespec='seconds')} UTC, before "
            f"{EPOCH_ISO[:10]}: a run stamped with it could not be checked or exported",
            "set the system clock (timedatectl set-ntp true, or date -s) and run again",
        )
    return when


#: how ``run.origin`` marks a run that ``results import`` brought (then host:path of the
#: file); a pushed run's origin is its runner's host:path; a run made here has none
IMPORTED = "import:"
ORIGIN_MAX = 500  # tables.run.c.origin


def imported_origin(source: str) -> str:
    """The ``run.origin`` of a run imported from ``source`` (host:path), within its column."""
    text = IMPORTED + source
    return text if len(text) <= ORIGIN_MAX else text[: ORIGIN_MAX - 1] + "…"


def provenance(origin: str | None) -> str | None:
    """Where a run came from, in words (None: it was made in this store)."""
    if not origin:
        return None
    if origin.startswith(IMPORTED):
        return f"imported from {origin[len(IMPORTED) :]}"
    return f"pushed from {origin}"


def image_row(session: Session, image: ImageSpec, digest: str | None) -> Image:
    fields = image.model_dump(include={"alias", "reference", "backend", "family", "components"})
    pk = image_pk(session, {**fields, "digest": digest or image.digest})
    from .models import Image

    return session.get_one(Image, pk)


def image_pk(session: Session, fields: dict[str, Any]) -> int:
    """The id of the image row with this (reference, digest, alias), inserted if missing. uq_image
    does not cover a NULL digest, so concurrent writers serialise first (a transaction lock on
    PostgreSQL, the write lock on SQLite): one inserts, the others find its row."""
    digest = fields.get("digest")
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        session.execute(
            text("SELECT pg_advisory_xact_lock(hashtext(:k))"),
            {"k": f"valorch.image|{fields['reference']}|{fields['alias']}"},
        )
    elif dialect == "sqlite":
        # a write statement takes SQLite's one write lock (waiting out the busy timeout) before
        # the look-up, so the look-up sees what the previous writer committed (BEGIN IMMEDIATE)
        session.execute(text("UPDATE image SET id = id WHERE 0"))
    from .models import Image

    q = select(Image.id).where(
        Image.reference == fields["reference"],
        Image.alias == fields["alias"],
        Image.digest.is_(None) if digest is None else Image.digest == digest,
    )
    pk = session.scalars(q).first()
    if pk is None:
        insert_ignore(session, Image, fields)
        pk = session.scalars(q).first()
    if pk is None:  # inserted, or yielded to a concurrent writer's row: it is there now
        raise InfrastructureError(f"image {fields['alias']} was not stored in the results store")
    return pk


def insert_ignore(session: Session, model: type[Base] | Table, values: dict[str, Any]) -> None:
    """INSERT that yields to a concurrent writer who inserted the same unique key
    first (another valorch process on the same database), instead of failing."""
    # the dialect is SQLite or PostgreSQL (db.connect refuses any other), both of which have it
    mod = __import__(f"sqlalchemy.dialects.{session.get_bind().dialect.name}", fromlist=["insert"])
    session.execute(mod.insert(model).values(**values).on_conflict_do_nothing())


def found_or_inserted(
    session: Session, model: type[_Row], values: dict[str, Any], *key: str
) -> _Row:
    """The row of ``model`` whose ``key`` columns hold what ``values`` says, inserted from
    ``values`` when there is none (insert_ignore: a concurrent writer's row wins)."""
    query = select(model).where(*(getattr(model, k) == values[k] for k in key))
    row = session.scalars(query).first()
    if row is None:
        insert_ignore(session, model, values)
        row = session.scalars(query).one()
    return row


def check_pks(
    session: Session,
    keys: Iterable[tuple[str, int]],
    info: dict[tuple[str, int], dict[str, Any]] | None = None,
) -> dict[tuple[str, int], int]:
    """The primary keys of (check_id, version), inserting the missing ones (with ``info``
    columns); a check another writer inserted meanwhile is taken, not duplicated."""
    wanted = set(keys)
    if not wanted:
        return {}
    have = _check_keys(session, wanted)
    missing = [
        {"check_id": c, "version": v, **(info or {}).get((c, v), {})}
        for c, v in sorted(wanted - set(have))
    ]
    if missing:
        for row in missing:
            insert_ignore(session, tables.check, row)
        have = _check_keys(session, wanted)
    return {k: have[k] for k in wanted}


def _check_keys(session: Session, wanted: set[tuple[str, int]]) -> dict[tuple[str, int], int]:
    c = tables.check.c
    names = sorted({name for name, _ in wanted})
    have: dict[tuple[str, int], int] = {}
    for chunk in chunks(names):
        for pk, name, v in session.execute(
            select(c.id, c.check_id, c.version).where(c.check_id.in_(list(chunk)))
        ):
            have[(name, v)] = pk
    return have


def start_run(  # noqa: PLR0913  # keyword-only, the run row's columns
    session: Session,
    *,
    batch: str,
    job: str,
    image: ImageSpec,
    digest: str | None,
    host: HostSpec,
    executor: str,
    spec_hash: str,
    cpu_only: bool,
    suites: Sequence[SuiteRef],
    run_id: str | None = None,
) -> Run:
    from .models import Host, Run, TaskRow

    spec = host.model_dump(mode="json")
    values = {"name": host.name, "fingerprint": host.fingerprint, "spec": spec}
    run = Run(
        id=run_id or str(uuid.uuid4()),
        batch=batch,
        job=job,
        image=image_row(session, image, digest),
        host=found_or_inserted(session, Host, values, "fingerprint"),
        executor=executor,
        valorch_version=__version__,
        spec_hash=spec_hash,
        cpu_only=cpu_only,
        started=now(),
        state="running",
        meta={},
    )
    session.add(run)
    session.flush()
    for suite in suites:
        session.add(
            TaskRow(run_id=run.id, suite=suite.name, suite_spec=suite.model_dump(mode="json"))
        )
    session.flush()
    return run


def add_results(
    session: Session,
    run_id: str,
    task_id: int | None,
    results: Iterable[CheckResult],
    declared: dict[str, str | None] | None = None,
    definitions: dict[str, str] | None = None,
) -> int:
    """Store results; an attempt already stored for this run is not stored twice.
    ``declared`` maps a check id to the library its row is about (CheckInfo.library),
    ``definitions`` to the hash of its effective definition (spec.definition_hash)."""
    from .blobs import finite
    from .models import Result

    results = list(results)
    existing: set[tuple[int, int]] = {
        (pk, attempt)
        for pk, attempt in session.execute(
            select(Result.check_pk, Result.attempt).where(Result.run_id == run_id)
        )
    }
    # each check's row (inserted when missing) as its first result describes it; ``library``
    # is the library the check is about: a result's own is what evidence showed ran
    rows = {
        (r.check, r.version): {
            # one line of printable text, as an import takes it (plaintext.py)
            "feature": visible(r.feature),
            "kind": r.kind,
            "library": visible((declared or {}).get(r.check), 200),
            "unit": visible(r.unit, 40),
            "bigger_is_better": r.bigger_is_better,
        }
        for r in reversed(results)
    }
    pks = check_pks(session, rows, rows)
    added = 0
    for res in results:
        pk = pks[(res.check, res.version)]
        if (pk, res.attempt) in existing:
            continue
        existing.add((pk, res.attempt))
        session.add(
            Result(
                run_id=run_id,
                task_id=task_id,
                check_pk=pk,
                attempt=res.attempt,
                status=res.status,
                duration_s=res.duration_s,
                message=res.message,
                log=res.log,
                # JSON has no NaN: every sink (--json, exports, a PostgreSQL push) stays valid
                metrics=finite(dict(res.metrics)),
                samples=[x for x in res.samples if math.isfinite(x)],
                device=visible(res.device, 200),
                library=visible(res.library, 200),
                definition=(definitions or {}).get(res.check),
            )
        )
        added += 1
    session.flush()
    return added


def merge_run_meta(session: Session, run_id: str, key: str, value: Any) -> None:
    """Set ``run.meta[key]`` (the caller commits)."""
    from .models import Run

    run = session.get(Run, run_id)
    if run is not None:
        run.meta = {**(run.meta or {}), key: value}


def get_run(session: Session, run_id: str) -> Run | None:
    from .models import Run

    run = session.get(Run, run_id)
    if run is None and len(run_id) >= 4:
        matches = list(session.scalars(select(Run).where(Run.id.like(f"{run_id}%"))).unique())
        if len(matches) == 1:
            run = matches[0]
    return run


def run_results(session: Session, run_id: str) -> list[Result]:
    from .models import Result

    return list(
        session.scalars(select(Result).where(Result.run_id == run_id).order_by(Result.id)).unique()
    )


FINISHED = ("done", "failed")


def image_ids(
    conn: Connection | Session, aliases: Sequence[str] = (), globs: Sequence[str] = ()
) -> list[int] | None:
    """Ids of the image rows with these aliases (or aliases/references matching these
    globs); None when neither is given (every image). The image table is small."""
    if not aliases and not globs:
        return None
    img = tables.image.c
    ids = []
    for pk, alias, reference in conn.execute(select(img.id, img.alias, img.reference)):
        if alias in aliases or any(fnmatch.fnmatchcase(alias, g) or reference == g for g in globs):
            ids.append(pk)
    return ids


def latest_runs(
    session: Session, images: Sequence[str] = (), skip_jobs: Sequence[str] = ()
) -> list[Run]:
    """The most recent finished run of each image (by alias), not of ``skip_jobs``.

    One statement: the newest start per (image row, host), joined back to those runs only:
    never every run of a long history."""
    from .models import Run

    ids = image_ids(session, aliases=images)
    if ids is not None and not ids:
        return []
    cond: list[ColumnElement[bool]] = [Run.state.in_(FINISHED)]
    if ids is not None:
        cond.append(Run.image_id.in_(ids))
    if skip_jobs:
        cond.append(Run.job.not_in(list(skip_jobs)))
    groups, newest = newest_of(("image_id", "host_id"), cond)
    q = select(Run, groups.c.first).join(groups, newest).where(*cond)
    latest: dict[str, Run] = {}
    since_when: dict[str, datetime] = {}
    for run, first in sorted(session.execute(q).unique(), key=lambda r: (r[0].started, r[0].id)):
        alias = run.image.alias
        latest[alias] = run  # the newest (then the greatest id) wins
        since_when[alias] = min(since_when.get(alias, first), first)
    # in the order each image first appeared, as the matrix columns always were
    return [latest[k] for k in sorted(latest, key=lambda k: (since_when[k], k))]


def newest_of(
    keys: Sequence[str], cond: Sequence[ColumnElement[bool]]
) -> tuple[Subquery, ColumnElement[bool]]:
    """The runs ``cond`` selects grouped by the run columns ``keys`` (each group's ``newest``
    and ``first`` start), and the condition that joins a run to its group as the newest."""
    run = tables.run.c
    groups = (
        select(*(run[k] for k in keys), func.max(run.started).label("newest"))
        .add_columns(func.min(run.started).label("first"))
        .where(*cond)
        .group_by(*(run[k] for k in keys))
        .subquery()
    )
    return groups, and_(*(run[k] == groups.c[k] for k in keys), run.started == groups.c.newest)


def last_runs_of_image(
    session: Session, alias: str, count: int = 2, skip_jobs: Sequence[str] = ()
) -> list[Run]:
    """The ``count`` newest finished runs of an image alias, oldest first (index
    ix_run_image_started): the two sides of "what changed since last night"."""
    from .models import Run

    ids = image_ids(session, aliases=[alias]) or []
    if not ids:
        return []
    return _newest(session, [Run.image_id.in_(ids)], count, skip_jobs)


def runs_like(session: Session, run: Run, count: int, skip_jobs: Sequence[str] = ()) -> list[Run]:
    """The ``count`` newest finished runs of the same image row (alias, reference, digest) on
    the same host as ``run``, oldest first: runs that may be pooled as one side of a timing
    comparison (index ix_run_image_started); not of ``skip_jobs``."""
    from .models import Run

    cond = [Run.image_id == run.image_id, Run.host_id == run.host_id]
    return _newest(session, cond, count, skip_jobs)


def _newest(
    session: Session, cond: list[ColumnElement[bool]], count: int, skip_jobs: Sequence[str]
) -> list[Run]:
    """The ``count`` newest finished runs ``cond`` selects, not of ``skip_jobs``, oldest first."""
    from .models import Run

    if skip_jobs:
        cond = [*cond, Run.job.not_in(list(skip_jobs))]
    q = select(Run).where(*cond, Run.state.in_(FINISHED))
    q = q.order_by(Run.started.desc(), Run.id.desc()).limit(count)
    return list(reversed(list(session.scalars(q).unique())))


def run_ids(
    conn: Connection | Session, *, batch: str | None = None, finished: bool = False
) -> set[str]:
    """Ids of a batch's runs, or (``finished``) of every run no longer running."""
    run = tables.run.c
    q = select(run.id)
    if batch:
        q = q.where(run.batch == batch)
    if finished:
        q = q.where(run.state != "running")
    return set(conn.scalars(q))
