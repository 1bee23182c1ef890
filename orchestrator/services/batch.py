"""One batch of a placed job, stage by stage (``run_batch``): start the first wave, open
the store, dispatch, finish, triage (``services/pipeline.execute`` lists the stages around
them)."""

from __future__ import annotations

import contextlib
import signal
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..scheduling.dispatch import abandon, execute
from ..scheduling.flight import Launch, Reporter, launch_planned
from ..spec import BatchInfo, JobSpec

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from ..store.queue import RunSummary
    from .placing import Placement
    from .recorder import StoreRecorder


def now() -> str:
    """This moment in UTC, to the second, as the runs' meta records it."""
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds")


def run_batch(
    placed: Placement,
    spec: JobSpec,
    factory: sessionmaker[Session],
    reporter: Reporter | None = None,
    retries: int = 2,
) -> list[RunSummary]:
    """One batch of a placed job. Ctrl-C, SIGTERM or a failing store in any stage leaves no
    container and the batch's runs ``interrupted`` for ``--resume``: ``sweeping`` and
    ``naming_batch`` around the batch, ``_stopped_early`` around the first wave,
    ``dispatch.abandon`` in dispatch."""
    batch = str(uuid.uuid4())
    launch = launch_planned(
        placed.planned, placed.executor_for, reporter, placed.hosts, placed.history, spec.labels
    )
    with sweeping(placed.hosts or (), factory, batch):
        with _stopped_early(launch, spec, factory, batch, placed.hosts is not None):
            # every task that has a slot starts before the batch's rows are written: its
            # container runs while the recorder loads (on a cluster its scheduler starts them)
            if placed.hosts is not None:
                Launch.wait_started(launch.start_ready())
            recorder = open_store(placed, factory)
        if placed.hosts is None:  # a cluster's batch keeps the dispatcher's own retries
            execute(launch, spec, recorder, batch)
        else:
            execute(launch, spec, recorder, batch, placed.hosts, retries)
        summaries = recorder.summaries(batch)
    finish(placed, factory, summaries)
    from . import triage

    triage.record(factory, [s.run_id for s in summaries], placed.catalog)
    return summaries


def open_store(placed: Placement, factory: sessionmaker[Session]) -> StoreRecorder:
    """The batch's recorder over the store, and the leftover containers of finished runs
    swept from the hosts. The modules that triage and report the batch once its tasks end
    are loaded here too, while the first wave runs, rather than after its last container."""
    with _holding_signals():  # Ctrl-C in the middle of an import would leave it half done
        from .recorder import StoreRecorder
    if placed.reap and placed.hosts is not None:
        reap(placed.hosts, factory, None)
    with _holding_signals():
        from ..render import junit  # noqa: F401 (services/run.report's)
        from . import triage, views  # noqa: F401 (run_batch's and report's)
    return StoreRecorder(factory)


def finish(placed: Placement, factory: sessionmaker[Session], summaries: list[RunSummary]) -> None:
    """After a batch, on its runs' meta: the digests staging found (the tag's index digest
    and the platform manifest's), the hosts quarantined for it and, for a GPU host (of a
    hosts inventory) where a run had failing checks, an L0 preflight of that host now: a
    host whose devices or engine failed is the likelier cause than the image (a host fault)."""
    from ..store import queries
    from .preflight import backends_of, level0

    with factory() as session:
        for s in summaries:
            got = placed.staged.get((s.host, s.image))
            if got is not None:
                queries.merge_run_meta(session, s.run_id, "image", got.meta())
            if placed.quarantined:
                queries.merge_run_meta(session, s.run_id, "quarantined", list(placed.quarantined))
        session.commit()
    hosts = {h.name: h for h in placed.hosts or ()}
    after: dict[str, dict[str, Any]] = {}  # the digests above are stored before this runs
    for name in sorted({s.host for s in summaries if s.failed and s.host in hosts}):
        if backends_of(hosts[name]) != ("cpu",):
            verdicts = [level0(hosts[name], b) for b in backends_of(hosts[name])]
            bad = [v.reason for v in verdicts if not v.ok]
            after[name] = {"ok": not bad, "reason": "; ".join(bad), "at": now()}
    if after:
        with factory() as session:
            for s in summaries:
                if s.host in after:
                    queries.merge_run_meta(session, s.run_id, "preflight_after", after[s.host])
            session.commit()


@contextmanager
def _holding_signals() -> Iterator[None]:
    """SIGINT and SIGTERM that arrive inside are held and given to their handlers on the way
    out (in the main thread; elsewhere signals do not arrive anyway)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    before = {
        sig: signal.signal(sig, lambda signum, _frame: held.append(signum))
        for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield
    finally:
        for sig, handler in before.items():
            if handler is not None:  # None: not installed from Python, nothing to put back
                signal.signal(sig, handler)
        if held:
            signal.raise_signal(held[0])


@contextmanager
def _stopped_early(
    launch: Launch, spec: JobSpec, factory: sessionmaker[Session], batch: str, first_wave: bool
) -> Iterator[None]:
    """A batch stopped (Ctrl-C, SIGTERM, a failing store) while its first wave ran and the
    store was loading: stopped and recorded as the dispatcher stops a batch, rows and all.
    Without a first wave (a cluster's batch) nothing runs yet, and nothing is recorded."""
    try:
        yield
    except BaseException as exc:
        if first_wave:
            try:
                from .recorder import StoreRecorder

                ctx = BatchInfo(batch, spec.name, spec.spec_hash, spec.labels)
                abandon(launch, ctx, StoreRecorder(factory), exc)
            except Exception:  # noqa: BLE001 - the store itself failed: the containers go all the same
                launch.stop()
        raise


@contextmanager
def sweeping(
    inventory: tuple[Any, ...], factory: sessionmaker[Session], batch: str
) -> Iterator[None]:
    """An interrupted batch (Ctrl-C, SIGTERM, a failing database) leaves no container: the
    dispatcher has cancelled its tasks in flight; this sweeps the engines for any container
    labelled with one of the batch's runs, in case one was created while that happened."""
    try:
        with naming_batch(batch):
            yield
    except BaseException:
        # the database may be what failed: the original error is the news
        if inventory:  # none: a cluster's batch, its scheduler's to clean up
            with contextlib.suppress(Exception):
                reap(inventory, factory, batch)
        raise


@contextmanager
def naming_batch(batch: str) -> Iterator[None]:
    """A signal that stops the batch (Ctrl-C's KeyboardInterrupt, SIGTERM's exception: neither
    is an ``Exception``) leaves carrying the batch's id as ``resume_batch``, for the command's
    hint "resume with valorch run --resume BATCH"."""
    try:
        yield
    except BaseException as exc:
        if not isinstance(exc, Exception) and getattr(exc, "resume_batch", None) is None:
            exc.resume_batch = batch  # type: ignore[attr-defined]
        raise


def reap(inventory: tuple[Any, ...], factory: sessionmaker[Session], batch: str | None) -> None:
    """Remove leftover valorch containers: those of ``batch`` (on --resume), and those of
    runs this database knows as finished or interrupted (a killed valorch leaves them)."""
    from ..executors.docker import reap_known
    from ..store import queries

    with factory() as session:
        known = queries.run_ids(session, batch=batch, finished=batch is None)
    for host in inventory:
        reap_known(host, known)
