"""The store's waivers (``valorch accept``): record one (who, why, until which day, the pass
rate now expected), checked against the checks and environments valorch knows; revoke one
(who, why); list them. Each row is read as the same ``Waiver`` a known-issues file gives
(regression/waivers.py), and run, diff, qualify and readiness decide with both alike."""

from __future__ import annotations

from datetime import date, datetime
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..regression.waivers import FAILED, Revocation, Waiver, Waivers
from ..render.waivers import as_dict
from ..store import queries, reads

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection
    from sqlalchemy.orm import Session, sessionmaker

_EXAMPLE = (
    "e.g. valorch accept add command.x --env 'rocm_*' --reason 'ROCm bug 123, fix in 6.5' "
    "--by alice --until 2026-12-31"
)


def waiver(pk: int, check: str, env: str, reason: str, by: str, until: date, **more: Any) -> Waiver:
    """A stored waiver: ``--env`` ALIAS or ALIAS@ARCH scopes the image and the host class; it
    excuses a check that failed, crashed, timed out or was not run."""
    images, _, host = env.partition("@")
    return Waiver(
        check,
        reason,
        images=images,
        host=host or "*",
        status=FAILED,
        until=until,
        by=by,
        source=f"accept #{pk}",
        id=pk,
        **more,
    )


def _row(r: Any) -> Waiver:
    revoked = (
        Revocation(r.revoked_by or "", r.revoked_reason or "", r.revoked)
        if r.revoked is not None
        else None
    )
    return waiver(
        r.id,
        r.check_id,
        r.env,
        r.reason,
        r.by,
        r.until.date(),
        expected_rate=r.expected_rate,
        created=r.created,
        revoked=revoked,
    )


def _filled(**fields: str) -> None:
    for flag, value in fields.items():
        if not value or not value.strip():
            raise InputError(
                f"{flag} is empty: an acceptance says what, where, why and who", _EXAMPLE
            )


def add(  # the acceptance's fields, each a flag
    factory: sessionmaker[Session],
    check: str,
    env: str,
    reason: str,
    by: str,
    until: date,
    expected_rate: float | None = None,
    allow_unseen: bool = False,
) -> Waiver:
    """Record a waiver; an InputError (exit 2) naming the flag when a field is unusable:
    CHECK and --env must name what the manifest or the store knows (``allow_unseen``: a
    declared check or an environment ahead of its first run)."""
    from ..checks_manifest import manifest
    from ..hostclass import host_class
    from ..regression.acceptance import check_problem, env_problem
    from ..store import acceptance_queries as aq

    now = queries.now()
    _filled(CHECK=check, **{"--env": env, "--reason": reason, "--by": by})
    check, env, reason, by = check.strip(), env.strip(), reason.strip(), by.strip()
    if until < now.date():
        raise InputError(
            f"--until {until:%Y-%m-%d} is in the past (today is {now:%Y-%m-%d} UTC): an "
            "acceptance must cover today or a later day",
            "give today or a later day, e.g. --until YYYY-MM-DD",
        )
    if expected_rate is not None and not 0 < expected_rate <= 1:
        raise InputError(
            f"--expected-rate {expected_rate:g} is outside (0, 1]", "e.g. --expected-rate 0.9"
        )
    with factory() as session:
        known = sorted(set(manifest().checks) | set(aq.check_ids(session)))
        stored = sorted({f"{alias}@{host_class(spec)}" for alias, spec in aq.environments(session)})
        for problem in (
            check_problem(check, known, allow_unseen),
            env_problem(env, stored, allow_unseen),
        ):
            if problem is not None:
                raise InputError(problem.what, problem.hint)
        midnight = datetime(until.year, until.month, until.day)
        pk = aq.add(
            session,
            check_id=check,
            env=env,
            reason=reason,
            by=by,
            until=midnight,
            expected_rate=expected_rate,
            created=now,
        )
        session.commit()
    return waiver(pk, check, env, reason, by, until, expected_rate=expected_rate, created=now)


def revoke(factory: sessionmaker[Session], pk: int, by: str, reason: str) -> Waiver:
    """Withdraw an acceptance: it stays in the history, revoked (who, when, why), and excuses
    nothing from now on. An InputError (exit 2) for an unknown or already revoked one."""
    from ..store import acceptance_queries as aq

    _filled(**{"--by": by, "--reason": reason})
    with factory() as session:
        row = aq.get(session, pk)
        if row is None:
            ids = [r.id for r in reads.acceptances(session)]
            raise InputError(
                f"no acceptance #{pk}",
                f"valorch accept list shows them (ids {', '.join(map(str, sorted(ids)[-10:]))})"
                if ids
                else "the store holds no acceptance",
            )
        if row.revoked is not None:
            raise InputError(
                f"acceptance #{pk} was already revoked by {row.revoked_by} on "
                f"{row.revoked:%Y-%m-%d %H:%M} UTC",
                "a revocation is kept as it was; valorch accept add records a new acceptance",
            )
        row = aq.revoke(session, pk, by.strip(), reason.strip(), queries.now())
        session.commit()
        return _row(row)


def live(session: Session | Connection) -> list[Waiver]:
    """The stored waivers that can excuse anything: every one but the revoked (what every
    reader of the store's waivers reads)."""
    return [w for w in map(_row, reads.acceptances(session)) if w.revoked is None]


def joined(session: Session | Connection, issues: Waivers | None) -> Waivers | None:
    """Every waiver a command decides with: the known-issues file's (None: no file) and the
    store's, one collection (None when there are none at all)."""
    stored = live(session)
    if not stored:
        return issues
    return (issues or Waivers((), queries.now())) + stored


def listing(db: str | None, check: str | None = None) -> list[dict[str, Any]]:
    """Every stored waiver ever recorded, revoked ones too, newest last day first, as a dict
    with ``state`` (live, expired or revoked) and ``live``: read with Core, no ORM."""
    from .session import read

    now = queries.now()
    found = [_row(r) for r in read(db, reads.acceptances)]
    return [as_dict(w, now) for w in found if check is None or fnmatchcase(check, w.check)]
