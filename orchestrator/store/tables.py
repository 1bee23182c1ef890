"""The results store's schema, defined once: SQLAlchemy Core tables on one ``MetaData``
(see docs/design.md, "Results store").

The read paths that start commands (``results list``, the run plan's history) query these
tables with Core and never import the ORM (about 0.1 s: docs/benchmarks.md); the ORM
classes of store/models.py are mapped onto these same Table objects for the write paths,
and Alembic's env (store/migrations/env.py) and ``create_all`` use this ``metadata``."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from .coltypes import Samples, check_values

metadata = MetaData()

image = Table(
    "image",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("alias", String(200), nullable=False, index=True),
    Column("reference", String(500), nullable=False),
    Column("digest", String(200)),
    Column("backend", String(20), nullable=False),
    Column("family", String(50), nullable=False, default=""),
    Column("components", JSON, nullable=False, default=dict),
    UniqueConstraint("reference", "digest", "alias", name="uq_image"),
)

host = Table(
    "host",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(200), nullable=False, index=True),
    Column("fingerprint", String(64), nullable=False, unique=True),
    Column("spec", JSON, nullable=False, default=dict),
)

run = Table(
    "run",
    metadata,
    Column("id", String(36), primary_key=True),  # uuid4
    Column("batch", String(36), nullable=False, index=True),  # one `valorch run` invocation
    Column("job", String(200), nullable=False),
    Column("image_id", ForeignKey("image.id"), nullable=False),
    Column("host_id", ForeignKey("host.id"), nullable=False),
    Column("executor", String(20), nullable=False),
    Column("valorch_version", String(40), nullable=False),
    Column("spec_hash", String(64), nullable=False),
    Column("cpu_only", Boolean, nullable=False, default=False),
    Column("started", DateTime, nullable=False, index=True),
    Column("ended", DateTime),
    # running | done | failed | interrupted
    Column("state", String(20), nullable=False, default="running"),
    Column("meta", JSON, nullable=False, default=dict),
    # where the row was written from when it came by `valorch results push`
    # ("runner-id" or "hostname:/path/of/the/local.sqlite"); NULL when written directly
    Column("origin", String(500)),
    # when `valorch results prune` dropped the raw samples of its results (summaries stay in metrics)
    Column("pruned", DateTime),
    # the runs of an image, newest first: diff of its latest two runs, latest:ALIAS
    Index("ix_run_image_started", "image_id", "started"),
    # the newest run of each image and host of a job: the latest matrix of a job
    Index("ix_run_job_latest", "job", "image_id", "host_id", "started"),
)

# one (image, suite) pair of a run: the unit the scheduler queues and retries
task = Table(
    "task",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", ForeignKey("run.id"), nullable=False, index=True),
    Column("suite", String(100), nullable=False),
    Column("suite_spec", JSON, nullable=False, default=dict),
    # queued | running | done | error
    Column("state", String(20), nullable=False, default="queued"),
    Column("tries", Integer, nullable=False, default=0),
    Column("started", DateTime),
    Column("ended", DateTime),
    Column("timings", JSON, nullable=False, default=dict),
    Column("error", Text),
    UniqueConstraint("run_id", "suite", name="uq_task"),
)

check = Table(
    "check",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("check_id", String(200), nullable=False),
    Column("version", Integer, nullable=False, default=1),
    Column("feature", String(300), nullable=False, default=""),
    Column("kind", String(20), nullable=False, default="feature"),
    Column("library", String(200)),
    Column("unit", String(40)),
    Column("bigger_is_better", Boolean, nullable=False, default=False),
    UniqueConstraint("check_id", "version", name="uq_check"),
)

result = Table(
    "result",
    metadata,
    Column("id", Integer, primary_key=True),
    # no index of its own on run_id: uq_result (run_id, check_pk, attempt) leads with it
    Column("run_id", ForeignKey("run.id"), nullable=False),
    Column("task_id", ForeignKey("task.id")),
    Column("check_pk", ForeignKey("check.id"), nullable=False, index=True),
    Column("attempt", Integer, nullable=False, default=1),
    Column("status", String(20), nullable=False),
    Column("duration_s", Float, nullable=False, default=0.0),
    Column("message", Text, nullable=False, default=""),
    Column("log", Text, nullable=False, default=""),
    Column("metrics", JSON, nullable=False, default=dict),
    Column("samples", Samples, nullable=False, default=list),
    # what the evidence says ran: the device ("cpu", "cuda:0 NVIDIA H100 … sm_90") and the
    # library its kernels came from (profiler kernel names, the CPU library) — never a
    # fixed label; check.library is what the row is about
    Column("device", String(200)),
    Column("library", String(200)),
    # spec.definition_hash of the check as this run defined it (None: stored before migration
    # 0008): results of one check id with different hashes measured different things
    Column("definition", String(16)),
    UniqueConstraint("run_id", "check_pk", "attempt", name="uq_result"),
    # a check's history as an index-only scan on PostgreSQL (migration 0005); its
    # INCLUDE columns are attached by metadata_for("postgresql")
    Index("ix_result_history", "check_pk").ddl_if(dialect="postgresql"),
)

#: ix_result_history's INCLUDE columns on PostgreSQL
HISTORY_INCLUDE = ("run_id", "attempt", "status", "samples", "metrics")

# one component found inside an image during a run (see audit.py)
inventory = Table(
    "inventory",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", ForeignKey("run.id"), nullable=False, index=True),
    Column("component", String(200), nullable=False),
    Column("value", Text, nullable=False),
    Column("source", String(40), nullable=False),
    Column("evidence", Text, nullable=False, default=""),
    Column("extra", JSON, nullable=False, default=dict),
    UniqueConstraint("run_id", "component", name="uq_inventory"),
)

# a published, immutable matrix snapshot
matrix_version = Table(
    "matrix_version",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("version", String(50), nullable=False, unique=True),
    Column("published", DateTime, nullable=False),
    Column("last_verified", DateTime, nullable=False),
    # source of truth: DB URL, job, runs
    Column("source", Text, nullable=False, default=""),
    Column("meta", JSON, nullable=False, default=dict),
)

matrix_cell = Table(
    "matrix_cell",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("matrix_id", ForeignKey("matrix_version.id"), nullable=False, index=True),
    Column("row", String(300), nullable=False),
    Column("column", String(300), nullable=False),
    Column("verdict", String(20), nullable=False),
    Column("statuses", JSON, nullable=False, default=list),
    Column("runs", JSON, nullable=False, default=list),
    Column("meta", JSON, nullable=False, default=dict),
    UniqueConstraint("matrix_id", "row", "column", name="uq_matrix_cell"),
)

# a name for a run or a published matrix version (``valorch baseline set``)
baseline = Table(
    "baseline",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(100), nullable=False, unique=True),
    Column("run_id", ForeignKey("run.id")),
    Column("matrix_version", String(50)),
    Column("created", DateTime, nullable=False),
)

# a signed in-toto attestation (a DSSE envelope) about one image digest, made by
# ``valorch attest`` from a run, a matrix version or a qualification (migration 0006)
attestation = Table(
    "attestation",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", ForeignKey("run.id"), index=True),  # None: from a version
    # "run <id>", "version v0.3", "qualify <dir>"
    Column("source", String(300), nullable=False),
    Column("subject", String(500), nullable=False),  # image name
    Column("digest", String(200), nullable=False, index=True),  # sha256:<hex>
    Column("predicate_type", String(200), nullable=False),
    # the DSSE envelope, one line of .intoto.jsonl
    Column("envelope", Text, nullable=False),
    Column("keyid", String(200), nullable=False, default=""),
    Column("created", DateTime, nullable=False),
    Column("pushed", String(500)),  # where --push put it (referrer or .att tag)
)

# why a red check of a run is red (regression/triage.py), computed when the run finished
# (migration 0007): one row per failing check, keyed by the result row of its last attempt;
# a suite that never reported (its task ended in an infrastructure error, no result stored)
# has one keyed by its task, subject "suite NAME"
triage = Table(
    "triage",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", ForeignKey("run.id"), nullable=False, index=True),
    Column("result_id", ForeignKey("result.id"), unique=True),
    Column("task_id", ForeignKey("task.id")),
    Column("subject", String(200), nullable=False),  # the check id, or "suite NAME"
    # regression | definition changed | flaky | host fault | image drift | ...
    Column("cls", String(20), nullable=False),
    Column("reason", Text, nullable=False, default=""),
    # {"runs": [...], "hosts": [...], "digests": [...], "details": [...]}: what it compared
    Column("evidence", JSON, nullable=False, default=dict),
    Column("computed", DateTime, nullable=False),
)

# a regression shipped knowingly (``valorch accept add``, migration 0009): a check in the
# environments ENV matches, who accepted it, why, until which day (``until``: midnight UTC
# of the last day covered, inclusive), and the pass rate now expected; the evidence stays
# red, readiness shows the acceptance beside it and does not gate on it until it expires
# or is revoked (``valorch accept revoke``, migration 0010: when, by whom, why; the row
# stays, as history)
acceptance = Table(
    "acceptance",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("check_id", String(200), nullable=False),
    Column("env", String(300), nullable=False),  # a glob over ALIAS or ALIAS@ARCH
    Column("reason", Text, nullable=False),
    Column("by", String(200), nullable=False),
    Column("until", DateTime, nullable=False),
    Column("expected_rate", Float),
    Column("created", DateTime, nullable=False),
    Column("revoked", DateTime),
    Column("revoked_by", String(200)),
    Column("revoked_reason", Text),
)

# the store's change log (migration 0011, store/changes.py): a trigger notes each run whose
# row or results, tasks, triage or inventory changed ("" for anything else), with the
# sequence number of its newest change and, on PostgreSQL, its transaction
store_change = Table(
    "store_change",
    metadata,
    Column("run_id", String(36), primary_key=True),
    Column("seq", BigInteger, nullable=False, index=True),
    Column("xid", BigInteger),
)

check_values(metadata)


def metadata_for(dialect: str) -> MetaData:
    """The schema's MetaData as a connection of ``dialect`` sees it: with that dialect's
    own index options. They are not given at import: a ``postgresql_*`` keyword makes
    SQLAlchemy import its PostgreSQL dialect, which every command that opens a store
    would pay, SQLite ones included. Alembic's env and the schema comparisons use this."""
    if dialect == "postgresql":
        index = next(i for i in result.indexes if i.name == "ix_result_history")
        index.dialect_options["postgresql"]["include"] = list(HISTORY_INCLUDE)
    return metadata


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
