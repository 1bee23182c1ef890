"""The schema revisions this valorch knows, without importing SQLAlchemy or Alembic:
``store.db`` checks them when it opens a database. A constant, because asking Alembic for
its head costs every command about half a second (docs/benchmarks.md, "Why the code is
shaped for speed")."""

from __future__ import annotations

BASELINE = "0001"  # the schema that create_all made before migrations existed
# The newest migration. Every command opens the database, and asking Alembic for its
# head costs Alembic's imports and the parsing of every script; a unit test keeps this equal
# to what Alembic says.
HEAD = "0010"
REVISIONS = (
    "0001",
    "0002",
    "0003",
    "0004",
    "0005",
    "0006",
    "0007",
    "0008",
    "0009",
    "0010",
)  # oldest first; a unit test keeps this equal to Alembic's history

# The tables and columns of HEAD, for the structural check of a store that is opened
# (store/damaged.py: a dropped table or column is a damaged store, named before anything
# runs); a unit test keeps this equal to the models.
SCHEMA = {
    "check": (
        "id",
        "check_id",
        "version",
        "feature",
        "kind",
        "library",
        "unit",
        "bigger_is_better",
    ),
    "host": ("id", "name", "fingerprint", "spec"),
    "image": ("id", "alias", "reference", "digest", "backend", "family", "components"),
    "matrix_version": ("id", "version", "published", "last_verified", "source", "meta"),
    "matrix_cell": ("id", "matrix_id", "row", "column", "verdict", "statuses", "runs", "meta"),
    "run": (
        "id",
        "batch",
        "job",
        "image_id",
        "host_id",
        "executor",
        "valorch_version",
        "spec_hash",
        "cpu_only",
        "started",
        "ended",
        "state",
        "meta",
        "origin",
        "pruned",
    ),
    "baseline": ("id", "name", "run_id", "matrix_version", "created"),
    "inventory": ("id", "run_id", "component", "value", "source", "evidence", "extra"),
    "task": (
        "id",
        "run_id",
        "suite",
        "suite_spec",
        "state",
        "tries",
        "started",
        "ended",
        "timings",
        "error",
    ),
    "result": (
        "id",
        "run_id",
        "task_id",
        "check_pk",
        "attempt",
        "status",
        "duration_s",
        "message",
        "log",
        "metrics",
        "samples",
        "device",
        "library",
        "definition",
    ),
    "attestation": (
        "id",
        "run_id",
        "source",
        "subject",
        "digest",
        "predicate_type",
        "envelope",
        "keyid",
        "created",
        "pushed",
    ),
    "triage": (
        "id",
        "run_id",
        "result_id",
        "task_id",
        "subject",
        "cls",
        "reason",
        "evidence",
        "computed",
    ),
    "acceptance": (
        "id",
        "check_id",
        "env",
        "reason",
        "by",
        "until",
        "expected_rate",
        "created",
        "revoked",
        "revoked_by",
        "revoked_reason",
    ),
}
