"""Bulk reads and writes for the regression diff, baselines and the scale benchmark.

SQLAlchemy Core statements (no ORM identity map) where the row counts are large:
one executemany per table for ingest, one joined SELECT for a diff side.
Every function takes the session it works in; committing is the caller's business.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

from sqlalchemy import JSON, DateTime, insert, select
from sqlalchemy.orm import Session

from .models import Baseline, Check, Host, Image, MatrixVersion, Result, Run, Samples, pack_samples
from .queries import now

CHUNK = 20_000


def _chunks(rows: Sequence[dict[str, Any]], size: int = CHUNK) -> Iterable[Sequence[dict[str, Any]]]:
    for i in range(0, len(rows), size):
        yield rows[i:i + size]


def insert_rows(session: Session, model: type, rows: Sequence[dict[str, Any]]) -> int:
    """INSERT many rows of one table (dicts keyed by column name) with executemany.

    Tables without date columns go straight to the driver's executemany with the JSON
    columns serialised here: SQLAlchemy's per-row bind processing is most of the cost
    of a 300,000-row ingest (bench/bench_scale.py)."""
    table = model.__table__
    if not rows:
        return 0
    given = set(rows[0])
    if session.bind.dialect.name != "sqlite" or any(isinstance(c.type, DateTime) for c in table.columns) or any(
            c.name not in given and c.default is not None for c in table.columns):
        for chunk in _chunks(rows):
            session.execute(insert(table), list(chunk))
        return len(rows)
    cols = [c for c in table.columns if c.name in given]
    json_cols = {c.name for c in cols if isinstance(c.type, JSON)}
    packed_cols = {c.name for c in cols if isinstance(c.type, Samples)}
    names = [c.name for c in cols]
    sql = (f'INSERT INTO "{table.name}" ({", ".join(f"{chr(34)}{n}{chr(34)}" for n in names)}) '
           f'VALUES ({", ".join("?" for _ in names)})')

    def value(row: dict[str, Any], name: str) -> Any:
        v = row[name]
        if name in packed_cols:
            return pack_samples(v)
        return json.dumps(v) if name in json_cols else v

    cursor = session.connection().connection.cursor()
    try:
        for chunk in _chunks(rows):
            cursor.executemany(sql, [tuple(value(r, n) for n in names) for r in chunk])
    finally:
        cursor.close()
    return len(rows)


def check_pks(session: Session, keys: Iterable[tuple[str, int]], info: dict[tuple[str, int], dict[str, Any]]
              | None = None) -> dict[tuple[str, int], int]:
    """The primary keys of (check_id, version), inserting the missing ones (with ``info`` columns)."""
    wanted = set(keys)
    have = {(c, v): pk for pk, c, v in session.execute(select(Check.id, Check.check_id, Check.version))}
    missing = [{"check_id": c, "version": v, **(info or {}).get((c, v), {})} for c, v in sorted(wanted - set(have))]
    if missing:
        insert_rows(session, Check, missing)
        have = {(c, v): pk for pk, c, v in session.execute(select(Check.id, Check.check_id, Check.version))}
    return {k: have[k] for k in wanted}


# --- reads for diff sides -------------------------------------------------------------------------------

def runs_of_batch(session: Session, batch: str) -> list[Run]:
    q = select(Run).where(Run.batch == batch) if len(batch) == 36 else select(Run).where(Run.batch.like(f"{batch}%"))
    runs = list(session.scalars(q.order_by(Run.started)).unique())
    if len({r.batch for r in runs}) > 1:
        return []  # an ambiguous prefix names nothing
    return runs


def matrix_version(session: Session, version: str) -> MatrixVersion | None:
    return session.scalars(select(MatrixVersion).where(MatrixVersion.version == version)).first()


def baseline(session: Session, name: str) -> Baseline | None:
    return session.scalars(select(Baseline).where(Baseline.name == name)).first()


def baselines(session: Session) -> list[Baseline]:
    return list(session.scalars(select(Baseline).order_by(Baseline.name)))


def set_baseline(session: Session, name: str, run_id: str | None = None, version: str | None = None) -> Baseline:
    row = baseline(session, name)
    if row is None:
        row = Baseline(name=name, created=now())
        session.add(row)
    row.run_id, row.matrix_version, row.created = run_id, version, now()
    session.flush()
    return row


def result_rows(session: Session, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Every attempt of the given runs, joined with its check and image, as plain dicts."""
    q = (select(Run.id.label("run_id"), Image.alias, Image.backend, Check.check_id, Check.version,
                Check.bigger_is_better, Result.status, Result.attempt, Result.samples, Result.metrics,
                Result.message)
         .join(Result, Result.run_id == Run.id).join(Check, Check.id == Result.check_pk)
         .join(Image, Image.id == Run.image_id).where(Run.id.in_(list(run_ids))).order_by(Result.id))
    return [dict(r._mapping) for r in session.execute(q)]


def host_names(session: Session, run_ids: Sequence[str]) -> list[str]:
    q = select(Host.name).join(Run, Run.host_id == Host.id).where(Run.id.in_(list(run_ids))).distinct()
    return sorted(session.scalars(q))
