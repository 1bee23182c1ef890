"""Which runs changed since a reader last looked, from the store's change log (migration
0011: triggers note every insert, update and delete, whoever made it), without reading the
runs. A reader notes ``mark()`` before it reads; later, ``since(mark)`` names every run
whose row or results, tasks, triage or inventory changed after that, and "" where anything
else did (an image, a host, a check, a version, a baseline, an acceptance, an attestation).
Takes the caller's session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, or_, select, text
from sqlalchemy.orm import Session

from .tables import metadata, store_change

OTHER = ""  # since(): something not of one run changed


@dataclass(frozen=True)
class Mark:
    """Where the change log stood: its newest number, and on PostgreSQL the oldest
    transaction still running (what it wrote was not yet to be seen)."""

    seq: int
    xmin: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "xmin": self.xmin}

    @classmethod
    def from_json(cls, doc: object) -> Mark | None:
        """A mark as to_json wrote it; None for anything else (never a guess)."""
        if not isinstance(doc, dict):
            return None
        seq, xmin = doc.get("seq"), doc.get("xmin")
        if type(seq) is not int or not (xmin is None or type(xmin) is int):
            return None
        return cls(seq, xmin)


def mark(session: Session) -> Mark | None:
    """Where the log stands now: taken before reading, so whatever a read could miss (a
    change not yet committed, one committed meanwhile) is after it. None where a trigger
    of the log is missing (dropped by hand): a log that may miss changes tells nothing."""
    if not _watched(session):
        return None
    seq = int(session.scalar(select(func.max(store_change.c.seq))) or 0)
    if session.get_bind().dialect.name != "postgresql":
        # one writer at a time: what it has not committed is numbered above the newest
        return Mark(seq)
    xmin = session.scalar(text("SELECT txid_snapshot_xmin(txid_current_snapshot())"))
    return Mark(seq, int(xmin))


def _watched(session: Session) -> bool:
    """Every table of the schema has its insert, update and delete triggers (on PostgreSQL
    its TRUNCATE trigger too), none of them disabled."""
    tables = set(metadata.tables) - {store_change.name}
    wanted = {(t, op) for t in tables for op in ("INSERT", "UPDATE", "DELETE")}
    if session.get_bind().dialect.name == "postgresql":
        wanted |= {(t, "TRUNCATE") for t in tables}  # which information_schema leaves out
        sql = (
            "SELECT c.relname, t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE t.tgname LIKE 'store_change%' AND t.tgenabled <> 'D'"
        )
        names = {(str(t), str(n)) for t, n in session.execute(text(sql))}
        have = {
            (t, op)
            for t, op in wanted
            if (t, f"store_change_{t}_{op.lower()}") in names
            or (op != "TRUNCATE" and (t, f"store_change_{t}") in names)
        }
    else:
        sql = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'store_change%'"
        made = set(session.scalars(text(sql)))
        have = {(t, op) for t, op in wanted if f"store_change_{t}_{op.lower()}" in made}
    return wanted <= have


def since(session: Session, then: Mark) -> frozenset[str]:
    """The runs changed after ``then`` (OTHER where something else did). On PostgreSQL
    numbers are not given in commit order, so a change by any transaction that was still
    running at ``then`` (or began after) counts too: one committed before ``then`` while an
    older transaction ran may be counted again (more than changed, never less)."""
    after = store_change.c.seq > then.seq
    if then.xmin is not None:
        after = or_(after, store_change.c.xid >= then.xmin)
    return frozenset(session.scalars(select(store_change.c.run_id).where(after)))
