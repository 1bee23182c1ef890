"""`valorch results push`: a runner's local runs into the shared store.

- Idempotent and resumable: a run is identified by its uuid; the runs the target
  already holds are not sent again, so pushing after an interruption sends the rest.
- Whole runs only: each run is written in its own transaction on the target, so an
  interruption (network, Ctrl-C, a killed process) leaves no half-run there.
- The local store is only read: nothing is deleted here. Until the target has
  committed a run, the local copy is the only one (`valorch results prune
  --pushed-to URL` deletes local runs only once the server holds them).
- Where each run came from is recorded on the target (run.origin).
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy.exc import DBAPIError, IntegrityError

from ..errors import InfrastructureError, InputError
from ..regression.triage import FAILING
from ..store import push as store_push
from ..store.checkpoint import background_checkpoints
from ..store.db import open_engine, public_url, session_factory, url_for, where


@dataclass(frozen=True)
class PushReport:
    source: str
    target: str
    origin: str
    finished: int  # finished runs in the source (since --since)
    already: int  # of those, already on the target
    pushed: int
    results: int
    unfinished: int  # running or interrupted runs, left for a later push
    seconds: float
    interrupted: bool = False


def push(
    source_db: str | None,
    target_db: str,
    since: datetime | None = None,
    origin: str | None = None,
) -> PushReport:
    if not target_db or not target_db.strip():
        raise InputError(
            "--to is empty: no shared store to push to", "pass --to URL or set VALORCH_PUSH_TO"
        )
    if url_for(source_db) == url_for(target_db):
        raise InputError(
            "--to names the database being pushed", "push a runner's local store to the shared one"
        )
    if not origin:  # this machine and the source store (a SQLite file's absolute path)
        url = url_for(source_db)
        sqlite = url.startswith("sqlite:///")
        path = str(Path(url[len("sqlite:///") :]).resolve()) if sqlite else public_url(source_db)
        origin = f"{socket.gethostname()}:{path}"
    src = session_factory(open_engine(source_db))
    dst_engine = open_engine(target_db)  # a server behind this valorch's schema is refused here
    dst = session_factory(dst_engine)
    target = where(dst_engine.url)
    t0 = time.perf_counter()
    with src() as s:
        ids, unfinished = store_push.finished_run_ids(s, since)
    try:
        with dst() as d:
            already = store_push.present(d, ids)
    except DBAPIError as exc:
        raise _lost(target, exc, 0, len(ids)) from None
    todo = [i for i in ids if i not in already]
    pushed = results = 0
    # pushed runs with a failing result: triaged on the shared store, against its history
    red: list[str] = []
    keys, source = store_push.Keys(), store_push.Source()
    interrupted = False
    try:
        # a SQLite target's WAL is copied on a second thread
        with background_checkpoints(dst_engine):
            for run_id in todo:
                with src() as s:
                    bundle = source.read(s, run_id)
                try:
                    with dst.begin() as d:  # one run, one transaction: whole or not at all
                        try:
                            results += store_push.write(d, bundle, origin, keys)
                        except KeyboardInterrupt:
                            # Ctrl-C inside a COPY leaves the connection mid-protocol: drop it (the server
                            # rolls the run back) rather than let the pool try to reset it and log a traceback
                            d.connection().invalidate()
                            raise
                    pushed += 1
                    if any(r.get("status") in FAILING for r in bundle.results):
                        red.append(run_id)
                except IntegrityError as exc:
                    keys.forget()  # rows inserted in the rolled-back transaction are gone
                    with dst() as d:
                        if not store_push.present(d, [run_id]):
                            raise InfrastructureError(
                                f"the results {target} refused run {run_id}: {exc.orig}",
                                "the run stays in the local store",
                            ) from None
                    # another pusher sent this run meanwhile: it is there, whole
                    already.add(run_id)
                except DBAPIError as exc:
                    raise _lost(target, exc, pushed, len(todo)) from None
        if red:
            from .triage import record_new

            record_new(dst, red)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        dst_engine.dispose()
    return PushReport(
        public_url(source_db),
        public_url(target_db),
        origin,
        len(ids),
        len(already),
        pushed,
        results,
        unfinished,
        time.perf_counter() - t0,
        interrupted,
    )


def _lost(target: str, exc: DBAPIError, pushed: int, total: int) -> InfrastructureError:
    first = (str(exc.orig).strip().splitlines() or [type(exc.orig).__name__])[0]
    return InfrastructureError(
        f"push to the results {target} failed after {pushed} of {total} runs: {first}",
        "the runs not pushed stay in the local store, and no half-run is on the server: "
        "run the same push again once the server answers",
    )
