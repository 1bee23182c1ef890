"""SQLAlchemy 2.0 typed ORM classes of the write paths, mapped onto the tables of
store/tables.py (the schema is defined there, once; see docs/design.md, "Results store").
The annotations type the attributes; the columns are the tables'."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy import Table
from sqlalchemy.orm import DeclarativeBase, Mapped, relationship

from . import tables


class Base(DeclarativeBase):
    metadata = tables.metadata
    # Every model here is mapped to one Table (the declarative base types it as FromClause).
    __table__: ClassVar[Table]


class Image(Base):
    __table__ = tables.image
    id: Mapped[int]
    alias: Mapped[str]
    reference: Mapped[str]
    digest: Mapped[str | None]
    backend: Mapped[str]
    family: Mapped[str]
    components: Mapped[dict[str, Any]]


class Host(Base):
    __table__ = tables.host
    id: Mapped[int]
    name: Mapped[str]
    fingerprint: Mapped[str]
    spec: Mapped[dict[str, Any]]


class Run(Base):
    __table__ = tables.run
    id: Mapped[str]
    batch: Mapped[str]
    job: Mapped[str]
    image_id: Mapped[int]
    host_id: Mapped[int]
    executor: Mapped[str]
    valorch_version: Mapped[str]
    spec_hash: Mapped[str]
    cpu_only: Mapped[bool]
    started: Mapped[datetime]
    ended: Mapped[datetime | None]
    state: Mapped[str]
    meta: Mapped[dict[str, Any]]
    origin: Mapped[str | None]
    pruned: Mapped[datetime | None]
    image: Mapped[Image] = relationship(lazy="joined")
    host: Mapped[Host] = relationship(lazy="joined")
    tasks: Mapped[list[TaskRow]] = relationship(back_populates="run", order_by="TaskRow.id")


class TaskRow(Base):
    __table__ = tables.task
    id: Mapped[int]
    run_id: Mapped[str]
    suite: Mapped[str]
    suite_spec: Mapped[dict[str, Any]]
    state: Mapped[str]
    tries: Mapped[int]
    started: Mapped[datetime | None]
    ended: Mapped[datetime | None]
    timings: Mapped[dict[str, Any]]
    error: Mapped[str | None]
    run: Mapped[Run] = relationship(back_populates="tasks")


class Check(Base):
    __table__ = tables.check
    id: Mapped[int]
    check_id: Mapped[str]
    version: Mapped[int]
    feature: Mapped[str]
    kind: Mapped[str]
    library: Mapped[str | None]
    unit: Mapped[str | None]
    bigger_is_better: Mapped[bool]


class Result(Base):
    __table__ = tables.result
    id: Mapped[int]
    run_id: Mapped[str]
    task_id: Mapped[int | None]
    check_pk: Mapped[int]
    attempt: Mapped[int]
    status: Mapped[str]
    duration_s: Mapped[float]
    message: Mapped[str]
    log: Mapped[str]
    metrics: Mapped[dict[str, Any]]
    samples: Mapped[list[Any]]
    device: Mapped[str | None]
    library: Mapped[str | None]
    definition: Mapped[str | None]
    check: Mapped[Check] = relationship(lazy="joined")
