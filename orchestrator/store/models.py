"""SQLAlchemy 2.0 typed declarative models (see DESIGN.md, "Results store")."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON}


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
    job: Mapped[str] = mapped_column(String(200), index=True)
    image_id: Mapped[int] = mapped_column(ForeignKey("image.id"), index=True)
    host_id: Mapped[int] = mapped_column(ForeignKey("host.id"))
    executor: Mapped[str] = mapped_column(String(20))
    valorch_version: Mapped[str] = mapped_column(String(40))
    spec_hash: Mapped[str] = mapped_column(String(64))
    cpu_only: Mapped[bool] = mapped_column(Boolean, default=False)
    started: Mapped[datetime] = mapped_column(DateTime, index=True)
    ended: Mapped[datetime | None] = mapped_column(DateTime)
    state: Mapped[str] = mapped_column(String(20), default="running")  # running | done | failed | interrupted
    meta: Mapped[dict[str, Any]] = mapped_column(default=dict)
    image: Mapped[Image] = relationship(lazy="joined")
    host: Mapped[Host] = relationship(lazy="joined")
    tasks: Mapped[list["TaskRow"]] = relationship(back_populates="run", order_by="TaskRow.id")


class TaskRow(Base):
    """One (image, suite) pair of a run: the unit the scheduler queues and retries."""

    __tablename__ = "task"
    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("run.id"), index=True)
    suite: Mapped[str] = mapped_column(String(100))
    suite_spec: Mapped[dict[str, Any]] = mapped_column(default=dict)
    state: Mapped[str] = mapped_column(String(20), default="queued")  # queued | running | done | error
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
    run_id: Mapped[str] = mapped_column(ForeignKey("run.id"), index=True)
    task_id: Mapped[int | None] = mapped_column(ForeignKey("task.id"))
    check_pk: Mapped[int] = mapped_column(ForeignKey("check.id"), index=True)
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    status: Mapped[str] = mapped_column(String(20), index=True)
    duration_s: Mapped[float] = mapped_column(Float, default=0.0)
    message: Mapped[str] = mapped_column(Text, default="")
    log: Mapped[str] = mapped_column(Text, default="")
    metrics: Mapped[dict[str, Any]] = mapped_column(default=dict)
    samples: Mapped[list[Any]] = mapped_column(default=list)
    check: Mapped[Check] = relationship(lazy="joined")
    __table_args__ = (UniqueConstraint("run_id", "check_pk", "attempt", name="uq_result"),)
