"""SQLAlchemy 2.0 typed declarative models (see docs/design.md, "Results store")."""

from __future__ import annotations

import json
import struct
import sys
from array import array
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Samples(TypeDecorator[Sequence[float]]):
    """Timing samples as packed little-endian float64: a tenth of the size of their
    JSON text and no float formatting on ingest (bench/bench_scale.py). Rows written
    before migration 0002 held JSON text; they read back the same."""

    impl = LargeBinary
    cache_ok = True

    def process_bind_param(self, value: Sequence[float] | None, dialect: Dialect) -> bytes:
        return pack_samples(value)

    def process_result_value(self, value: bytes | str | None, dialect: Dialect) -> list[float]:
        return unpack_samples(value)


def pack_samples(values: Iterable[float] | None) -> bytes:
    try:
        arr = array("d", values or ())  # a list of floats (or ints): no per-value Python call
    except TypeError:
        arr = array("d", [float(v) for v in values or ()])
    if sys.byteorder != "little":
        arr.byteswap()
    return arr.tobytes()


def unpack_samples(value: bytes | str | None) -> list[float]:
    return list(samples_tuple(value))


def samples_tuple(value: bytes | str | None) -> tuple[float, ...]:
    """Stored samples as a tuple of floats (struct: one C call, any byte order)."""
    if value is None:
        return ()
    if isinstance(value, str):  # written as JSON before migration 0002
        return tuple(float(v) for v in json.loads(value))
    raw = bytes(value)
    return struct.unpack(f"<{len(raw) // 8}d", raw)


class Base(DeclarativeBase):
    # read once by SQLAlchemy's declarative base, never changed
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON}  # noqa: RUF012
    # Every model here is mapped to one Table (the declarative base types it as FromClause).
    __table__: ClassVar[Table]


class Image(Base):
    __tablename__ = "image"
    id: Mapped[int] = mapped_column(primary_key=True)
    alias: Mapped[str] = mapped_column(String(200), index=True)
    reference: Mapped[str] = mapped_column(String(500))
    digest: Mapped[str | None] = mapped_column(String(200))
    backend: Mapped[str] = mapped_column(String(20))
    family: Mapped[str] = mapped_column(String(50), default="")
    components: Mapped[dict[str, Any]] = mapped_column(default=dict)
    __table_args__ = (UniqueConstraint("reference", "digest", "alias", name="uq_image"),)


class Host(Base):
    __tablename__ = "host"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), index=True)
    fingerprint: Mapped[str] = mapped_column(String(64), unique=True)
    spec: Mapped[dict[str, Any]] = mapped_column(default=dict)


class Run(Base):
    __tablename__ = "run"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)  # uuid4
    batch: Mapped[str] = mapped_column(String(36), index=True)  # one `valorch run` invocation
    job: Mapped[str] = mapped_column(String(200))
    image_id: Mapped[int] = mapped_column(ForeignKey("image.id"))
    host_id: Mapped[int] = mapped_column(ForeignKey("host.id"))
    executor: Mapped[str] = mapped_column(String(20))
    valorch_version: Mapped[str] = mapped_column(String(40))
    spec_hash: Mapped[str] = mapped_column(String(64))
    cpu_only: Mapped[bool] = mapped_column(Boolean, default=False)
    started: Mapped[datetime] = mapped_column(DateTime, index=True)
    ended: Mapped[datetime | None] = mapped_column(DateTime)
    state: Mapped[str] = mapped_column(
        String(20), default="running"
    )  # running | done | failed | interrupted
    meta: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # where the row was written from when it came by `valorch results push`
    # ("runner-id" or "hostname:/path/of/the/local.sqlite"); NULL when written directly
    origin: Mapped[str | None] = mapped_column(String(500))
    # when `valorch results prune` dropped the raw samples of its results (summaries stay in metrics)
    pruned: Mapped[datetime | None] = mapped_column(DateTime)
    image: Mapped[Image] = relationship(lazy="joined")
    host: Mapped[Host] = relationship(lazy="joined")
    tasks: Mapped[list[TaskRow]] = relationship(back_populates="run", order_by="TaskRow.id")
    __table_args__ = (
        # the runs of an image, newest first: diff of its latest two runs, latest:ALIAS
        Index("ix_run_image_started", "image_id", "started"),
        # the newest run of each image and host of a job: the latest matrix of a job
        Index("ix_run_job_latest", "job", "image_id", "host_id", "started"),
    )


class TaskRow(Base):
    """One (image, suite) pair of a run: the unit the scheduler queues and retries."""

    __tablename__ = "task"
    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("run.id"), index=True)
    suite: Mapped[str] = mapped_column(String(100))
    suite_spec: Mapped[dict[str, Any]] = mapped_column(default=dict)
    state: Mapped[str] = mapped_column(
        String(20), default="queued"
    )  # queued | running | done | error
    tries: Mapped[int] = mapped_column(Integer, default=0)
    started: Mapped[datetime | None] = mapped_column(DateTime)
    ended: Mapped[datetime | None] = mapped_column(DateTime)
    timings: Mapped[dict[str, Any]] = mapped_column(default=dict)
    error: Mapped[str | None] = mapped_column(Text)
    run: Mapped[Run] = relationship(back_populates="tasks")
    __table_args__ = (UniqueConstraint("run_id", "suite", name="uq_task"),)


class Check(Base):
    __tablename__ = "check"
    id: Mapped[int] = mapped_column(primary_key=True)
    check_id: Mapped[str] = mapped_column(String(200))
    version: Mapped[int] = mapped_column(Integer, default=1)
    feature: Mapped[str] = mapped_column(String(300), default="")
    kind: Mapped[str] = mapped_column(String(20), default="feature")
    library: Mapped[str | None] = mapped_column(String(200))
    unit: Mapped[str | None] = mapped_column(String(40))
    bigger_is_better: Mapped[bool] = mapped_column(Boolean, default=False)
    __table_args__ = (UniqueConstraint("check_id", "version", name="uq_check"),)


class Result(Base):
    __tablename__ = "result"
    id: Mapped[int] = mapped_column(primary_key=True)
    # no index of its own on run_id: uq_result (run_id, check_pk, attempt) leads with it
    run_id: Mapped[str] = mapped_column(ForeignKey("run.id"))
    task_id: Mapped[int | None] = mapped_column(ForeignKey("task.id"))
    check_pk: Mapped[int] = mapped_column(ForeignKey("check.id"), index=True)
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    status: Mapped[str] = mapped_column(String(20))
    duration_s: Mapped[float] = mapped_column(Float, default=0.0)
    message: Mapped[str] = mapped_column(Text, default="")
    log: Mapped[str] = mapped_column(Text, default="")
    metrics: Mapped[dict[str, Any]] = mapped_column(default=dict)
    samples: Mapped[list[Any]] = mapped_column(Samples, default=list)
    # what the evidence says ran: the device ("cpu", "cuda:0 NVIDIA H100 … sm_90") and the
    # library its kernels came from (profiler kernel names, the CPU library) — never a
    # fixed label; check.library is what the row is about
    device: Mapped[str | None] = mapped_column(String(200))
    library: Mapped[str | None] = mapped_column(String(200))
    # spec.definition_hash of the check as this run defined it (None: stored before migration
    # 0008): results of one check id with different hashes measured different things
    definition: Mapped[str | None] = mapped_column(String(16))
    check: Mapped[Check] = relationship(lazy="joined")
    __table_args__ = (
        UniqueConstraint("run_id", "check_pk", "attempt", name="uq_result"),
        # a check's history as an index-only scan on PostgreSQL (migration 0005); its
        # INCLUDE columns are attached by metadata_for("postgresql")
        Index("ix_result_history", "check_pk").ddl_if(dialect="postgresql"),
    )


#: ix_result_history's INCLUDE columns on PostgreSQL
HISTORY_INCLUDE = ("run_id", "attempt", "status", "samples", "metrics")


def metadata_for(dialect: str) -> MetaData:
    """The models' MetaData as a connection of ``dialect`` sees it: with that dialect's
    own index options. They are not given at import: a ``postgresql_*`` keyword makes
    SQLAlchemy import its PostgreSQL dialect, which every command that opens a store
    would pay, SQLite ones included. Alembic's env and the schema comparisons use this."""
    if dialect == "postgresql":
        index = next(i for i in Result.__table__.indexes if i.name == "ix_result_history")
        index.dialect_options["postgresql"]["include"] = list(HISTORY_INCLUDE)
    return Base.metadata


def include_object_for(dialect: str) -> Callable[[object, str | None, str, bool, object], bool]:
    """Alembic's ``include_object`` for a connection of ``dialect``: schema objects made for
    another database only (``.ddl_if(dialect=...)``, e.g. ix_result_history on PostgreSQL)
    are not missing there."""

    def include(
        obj: object, name: str | None, type_: str, reflected: bool, compare_to: object
    ) -> bool:
        only = getattr(getattr(obj, "_ddl_if", None), "dialect", None)
        return only is None or dialect in ((only,) if isinstance(only, str) else tuple(only))

    return include


class InventoryRow(Base):
    """One component found inside an image during a run (see audit.py)."""

    __tablename__ = "inventory"
    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("run.id"), index=True)
    component: Mapped[str] = mapped_column(String(200))
    value: Mapped[str] = mapped_column(Text)
    source: Mapped[str] = mapped_column(String(40))
    evidence: Mapped[str] = mapped_column(Text, default="")
    extra: Mapped[dict[str, Any]] = mapped_column(default=dict)
    __table_args__ = (UniqueConstraint("run_id", "component", name="uq_inventory"),)


class MatrixVersion(Base):
    """A published, immutable matrix snapshot."""

    __tablename__ = "matrix_version"
    id: Mapped[int] = mapped_column(primary_key=True)
    version: Mapped[str] = mapped_column(String(50), unique=True)
    published: Mapped[datetime] = mapped_column(DateTime)
    last_verified: Mapped[datetime] = mapped_column(DateTime)
    source: Mapped[str] = mapped_column(Text, default="")  # source of truth: DB URL, job, runs
    meta: Mapped[dict[str, Any]] = mapped_column(default=dict)
    cells: Mapped[list[MatrixCell]] = relationship(
        back_populates="matrix", order_by="MatrixCell.id"
    )


class MatrixCell(Base):
    __tablename__ = "matrix_cell"
    id: Mapped[int] = mapped_column(primary_key=True)
    matrix_id: Mapped[int] = mapped_column(ForeignKey("matrix_version.id"), index=True)
    row: Mapped[str] = mapped_column(String(300))
    column: Mapped[str] = mapped_column(String(300))
    verdict: Mapped[str] = mapped_column(String(20))
    statuses: Mapped[list[Any]] = mapped_column(default=list)
    runs: Mapped[list[Any]] = mapped_column(default=list)
    meta: Mapped[dict[str, Any]] = mapped_column(default=dict)
    matrix: Mapped[MatrixVersion] = relationship(back_populates="cells")
    __table_args__ = (UniqueConstraint("matrix_id", "row", "column", name="uq_matrix_cell"),)


class Baseline(Base):
    """A name for a run or a published matrix version (``valorch baseline set``)."""

    __tablename__ = "baseline"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    run_id: Mapped[str | None] = mapped_column(ForeignKey("run.id"))
    matrix_version: Mapped[str | None] = mapped_column(String(50))
    created: Mapped[datetime] = mapped_column(DateTime)


class Attestation(Base):
    """A signed in-toto attestation (a DSSE envelope) about one image digest, made by
    ``valorch attest`` from a run, a matrix version or a qualification (migration 0006)."""

    __tablename__ = "attestation"
    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[str | None] = mapped_column(
        ForeignKey("run.id"), index=True
    )  # None: from a version
    source: Mapped[str] = mapped_column(String(300))  # "run <id>", "version v0.3", "qualify <dir>"
    subject: Mapped[str] = mapped_column(String(500))  # image name
    digest: Mapped[str] = mapped_column(String(200), index=True)  # sha256:<hex>
    predicate_type: Mapped[str] = mapped_column(String(200))
    envelope: Mapped[str] = mapped_column(Text)  # the DSSE envelope, one line of .intoto.jsonl
    keyid: Mapped[str] = mapped_column(String(200), default="")
    created: Mapped[datetime] = mapped_column(DateTime)
    pushed: Mapped[str | None] = mapped_column(
        String(500)
    )  # where --push put it (referrer or .att tag)


class TriageRow(Base):
    """Why a red check of a run is red (regression/triage.py), computed when the run finished
    (migration 0007): one row per failing check, keyed by the result row of its last attempt;
    a suite that never reported (its task ended in an infrastructure error, no result stored)
    has one keyed by its task, subject "suite NAME"."""

    __tablename__ = "triage"
    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("run.id"), index=True)
    result_id: Mapped[int | None] = mapped_column(ForeignKey("result.id"), unique=True)
    task_id: Mapped[int | None] = mapped_column(ForeignKey("task.id"))
    subject: Mapped[str] = mapped_column(String(200))  # the check id, or "suite NAME"
    cls: Mapped[str] = mapped_column(
        String(20)
    )  # regression | definition changed | flaky | host fault | image drift | ...
    reason: Mapped[str] = mapped_column(Text, default="")
    # {"runs": [...], "hosts": [...], "digests": [...], "details": [...]}: what it compared
    evidence: Mapped[dict[str, Any]] = mapped_column(default=dict)
    computed: Mapped[datetime] = mapped_column(DateTime)


class AcceptanceRow(Base):
    """A regression shipped knowingly (``valorch accept add``, migration 0008): a check in the
    environments ENV matches, who accepted it, why, until when, and the pass rate now
    expected. The evidence stays red; readiness shows the acceptance beside it and does not
    gate on it until it expires."""

    __tablename__ = "acceptance"
    id: Mapped[int] = mapped_column(primary_key=True)
    check_id: Mapped[str] = mapped_column(String(200))
    env: Mapped[str] = mapped_column(String(300))  # a glob over ALIAS or ALIAS@ARCH
    reason: Mapped[str] = mapped_column(Text)
    by: Mapped[str] = mapped_column(String(200))
    until: Mapped[datetime] = mapped_column(DateTime)
    expected_rate: Mapped[float | None] = mapped_column(Float)
    created: Mapped[datetime] = mapped_column(DateTime)


class Checked(TypeDecorator[Any]):
    """A stored column's type whose reading fails as "damaged store: TABLE.COLUMN holds …"
    (store/damaged.py, exit 3), not as the ValueError or JSONDecodeError of a value that does
    not parse (``run.started = 'garbage'``, ``run.meta = '{not json'``)."""

    impl = DateTime  # replaced by the wrapped type of each column
    cache_ok = True

    def __init__(self, inner: Any, where: str) -> None:
        super().__init__()
        self.impl = self.inner = inner
        self.where = where

    @property
    def comparator_factory(self) -> Any:  # type: ignore[override]  # the wrapped type's
        # (a read-only property over the base's attribute: JSON's col["key"] keeps working)
        return self.inner.comparator_factory

    def result_processor(self, dialect: Dialect, coltype: object) -> Callable[[Any], Any] | None:
        inner = self.inner.dialect_impl(dialect).result_processor(dialect, coltype)
        if inner is None:
            return None
        where = self.where
        kind = {"DateTime": "a date/time", "JSON": "JSON", "Samples": "a sample array"}.get(
            type(self.inner).__name__, "a valid value"
        )

        def process(value: Any) -> Any:
            try:
                return inner(value)
            except (ValueError, TypeError, struct.error) as exc:
                from .damaged import damaged_value

                raise damaged_value(where, value, exc, kind) from None

        return process


def _check_values(metadata: MetaData) -> None:
    for table in metadata.tables.values():
        for column in table.columns:
            if isinstance(column.type, (DateTime, JSON, Samples)):
                column.type = Checked(column.type, f"{table.name}.{column.name}")


_check_values(Base.metadata)
