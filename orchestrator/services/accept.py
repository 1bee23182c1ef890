"""Accepted regressions: record one (who, why, until when, the pass rate now expected) and
list them; readiness shows them beside the red cells they cover (services/readiness.py)."""

from __future__ import annotations

from datetime import datetime
from fnmatch import fnmatchcase
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from ..errors import InputError
from ..regression.acceptance import Acceptance
from ..store import acceptance_queries as aq
from ..store import queries


def _row(r: Any) -> Acceptance:
    return Acceptance(r.id, r.check_id, r.env, r.reason, r.by, r.until, r.expected_rate, r.created)


def add(  # the acceptance's fields, each a flag
    factory: sessionmaker[Session],
    check: str,
    env: str,
    reason: str,
    by: str,
    until: datetime,
    expected_rate: float | None = None,
) -> Acceptance:
    """Record an acceptance; an InputError (exit 2) naming the flag when a field is unusable."""
    now = queries.now()
    for flag, value in (("CHECK", check), ("--env", env), ("--reason", reason), ("--by", by)):
        if not value or not value.strip():
            raise InputError(
                f"{flag} is empty: an acceptance says what, where, why and who",
                "e.g. valorch accept add command.x --env 'rocm_*' --reason 'ROCm bug 123, fix in "
                "6.5' --by alice --until 2026-12-31",
            )
    if until <= now:
        raise InputError(
            f"--until {until:%Y-%m-%d %H:%M} is in the past: an acceptance must expire later",
            "give a future date, e.g. --until YYYY-MM-DD",
        )
    if expected_rate is not None and not 0 < expected_rate <= 1:
        raise InputError(
            f"--expected-rate {expected_rate:g} is outside (0, 1]", "e.g. --expected-rate 0.9"
        )
    with factory() as session:
        pk = aq.add(
            session,
            check.strip(),
            env.strip(),
            reason.strip(),
            by.strip(),
            until,
            expected_rate,
            now,
        )
        session.commit()
    return Acceptance(
        pk, check.strip(), env.strip(), reason.strip(), by.strip(), until, expected_rate, now
    )


def every(factory: sessionmaker[Session]) -> list[Acceptance]:
    with factory() as session:
        return [_row(r) for r in aq.every(session)]


def listing(factory: sessionmaker[Session], check: str | None = None) -> list[dict[str, Any]]:
    """Every acceptance as a dict, with ``live`` (not yet expired)."""
    now = queries.now()
    return [
        {**a.as_dict(), "live": a.until > now}
        for a in every(factory)
        if check is None or fnmatchcase(check, a.check)
    ]
