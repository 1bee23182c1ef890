"""Reads and writes of the results store. Every function takes the session it
works in; committing is the caller's business."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any, Iterable, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from .. import __version__
from ..spec import CheckResult, HostSpec, ImageSpec, SuiteRef
from .models import Check, Host, Image, Result, Run, TaskRow


def now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def image_row(session: Session, image: ImageSpec, digest: str | None) -> Image:
    digest = digest or image.digest
    row = session.scalars(select(Image).where(Image.reference == image.reference, Image.alias == image.alias,
                                              Image.digest.is_(None) if digest is None else Image.digest == digest)
                          ).first()
    if row is None:
        row = Image(alias=image.alias, reference=image.reference, digest=digest, backend=image.backend,
                    family=image.family, components=dict(image.components))
        session.add(row)
        session.flush()
    return row


def _insert_ignore(session: Session, model: type, values: dict) -> None:
    """INSERT that yields to a concurrent writer who inserted the same unique key
    first (another valorch process on the same database), instead of failing."""
    dialect = session.get_bind().dialect.name
    if dialect in ("sqlite", "postgresql"):
        mod = __import__(f"sqlalchemy.dialects.{dialect}", fromlist=["insert"])
        session.execute(mod.insert(model).values(**values).on_conflict_do_nothing())
    else:
        session.add(model(**values))
        session.flush()


def host_row(session: Session, host: HostSpec) -> Host:
    query = select(Host).where(Host.fingerprint == host.fingerprint)
    row = session.scalars(query).first()
    if row is None:
        _insert_ignore(session, Host, {"name": host.name, "fingerprint": host.fingerprint,
                                       "spec": host.model_dump(mode="json")})
        row = session.scalars(query).one()
    return row


def check_row(session: Session, res: CheckResult, cache: dict[tuple[str, int], Check] | None = None) -> Check:
    key = (res.check, res.version)
    if cache is not None and key in cache:
        return cache[key]
    query = select(Check).where(Check.check_id == res.check, Check.version == res.version)
    row = session.scalars(query).first()
    if row is None:
        _insert_ignore(session, Check, {"check_id": res.check, "version": res.version, "feature": res.feature,
                                        "kind": res.kind, "library": res.library, "unit": res.unit,
                                        "bigger_is_better": res.bigger_is_better})
        row = session.scalars(query).one()
    if cache is not None:
        cache[key] = row
    return row


def start_run(session: Session, *, batch: str, job: str, image: ImageSpec, digest: str | None, host: HostSpec,
              executor: str, spec_hash: str, cpu_only: bool, suites: Sequence[SuiteRef],
              run_id: str | None = None) -> Run:
    run = Run(id=run_id or str(uuid.uuid4()), batch=batch, job=job, image=image_row(session, image, digest),
              host=host_row(session, host), executor=executor, valorch_version=__version__,
              spec_hash=spec_hash, cpu_only=cpu_only, started=now(), state="running", meta={})
    session.add(run)
    session.flush()
    for suite in suites:
        session.add(TaskRow(run_id=run.id, suite=suite.name, suite_spec=suite.model_dump(mode="json")))
    session.flush()
    return run


def add_results(session: Session, run_id: str, task_id: int | None, results: Iterable[CheckResult]) -> int:
    """Store results; an attempt already stored for this run is not stored twice."""
    cache: dict[tuple[str, int], Check] = {}
    existing = set(session.execute(select(Result.check_pk, Result.attempt).where(Result.run_id == run_id)).all())
    added = 0
    for res in results:
        chk = check_row(session, res, cache)
        if (chk.id, res.attempt) in existing:
            continue
        existing.add((chk.id, res.attempt))
        session.add(Result(run_id=run_id, task_id=task_id, check_pk=chk.id, attempt=res.attempt,
                           status=res.status, duration_s=res.duration_s, message=res.message, log=res.log,
                           metrics=dict(res.metrics), samples=list(res.samples), device=res.device,
                           library=res.library))
        added += 1
    session.flush()
    return added


def list_runs(session: Session, limit: int = 50, image: str | None = None) -> list[Run]:
    q = select(Run).order_by(Run.started.desc()).limit(limit)
    if image:
        q = q.join(Run.image).where((Image.alias == image) | (Image.reference == image))
    return list(session.scalars(q).unique())


def merge_run_meta(session: Session, run_id: str, key: str, value: Any) -> None:
    """Set ``run.meta[key]`` (the caller commits)."""
    run = session.get(Run, run_id)
    if run is not None:
        run.meta = {**(run.meta or {}), key: value}


def get_run(session: Session, run_id: str) -> Run | None:
    run = session.get(Run, run_id)
    if run is None and len(run_id) >= 4:
        matches = list(session.scalars(select(Run).where(Run.id.like(f"{run_id}%"))).unique())
        if len(matches) == 1:
            run = matches[0]
    return run


def run_results(session: Session, run_id: str) -> list[Result]:
    return list(session.scalars(select(Result).where(Result.run_id == run_id).order_by(Result.id)).unique())


def latest_runs(session: Session, images: Sequence[str] = ()) -> list[Run]:
    """The most recent finished run of each image (by alias)."""
    latest: dict[str, Run] = {}
    q = select(Run).where(Run.state.in_(("done", "failed"))).order_by(Run.started)
    for run in session.scalars(q).unique():
        if images and run.image.alias not in images:
            continue
        latest[run.image.alias] = run
    return list(latest.values())


def suite_durations(session: Session, limit: int = 500) -> dict[tuple[str, str], float]:
    """The last measured duration of each (image alias, suite), for placement and ETAs."""
    q = (select(Image.alias, TaskRow.suite, TaskRow.timings).join(Run, TaskRow.run_id == Run.id)
         .join(Image, Run.image_id == Image.id).where(TaskRow.state == "done").order_by(TaskRow.id.desc()).limit(limit))
    out: dict[tuple[str, str], float] = {}
    for alias, suite, timings in session.execute(q):
        total = (timings or {}).get("total_s")
        if total and (alias, suite) not in out:
            out[(alias, suite)] = float(total)
    return out


def run_ids(session: Session, *, batch: str | None = None, finished: bool = False) -> set[str]:
    """Ids of a batch's runs, or (``finished``) of every run no longer running."""
    q = select(Run.id)
    if batch:
        q = q.where(Run.batch == batch)
    if finished:
        q = q.where(Run.state != "running")
    return set(session.scalars(q))
