"""Which stored results speak for a matrix cell (pure: no I/O, no SQL).

A cell is the newest final verdict of one check in one *environment*: an image (by
alias, across its digests) on one host class. It is never "the newest run": a run
that covered less (a ``--check`` filter, one suite of several, a bisect, a run cut
short by the infrastructure) never erases what an earlier run measured.

- **Environment.** ``alias`` on a host class: the GPUs the run was given (``amd
  gfx942``, ``nvidia sm_90``) or ``cpu``. A GPU image run with ``--cpu-only`` is its
  own environment ("cpu only"), never the image's GPU column.
- **Final.** Every verdict but ``error`` (the harness failed: says nothing about the
  image), and ``skip`` where a check filter narrowed the suite. An inconclusive newer
  attempt leaves the older final verdict standing, flagged ``newer-inconclusive``.
- **Walk.** Each environment's runs are read newest first; a suite is *settled* by
  the newest run that ran it whole (no check filter) to the end. Older runs are read
  while one of the environment's suites is unsettled, and then, for the checks that
  still have no final verdict (a harness error), at most ``LOOKBACK`` runs further; a
  check that only older runs have (a whole newer run of its suite no longer has it: a
  retired check) stays out. The usual case (a nightly that runs everything) reads one
  run per environment.
- **Check versions.** A changed check is a new check: a cell takes evidence only from
  the newest version of the check seen in its environment.
- **Device.** Each observation carries its device and the image's backend: in a ROCm or
  CUDA image, a result that ran on the CPU is ``cpu-only`` (never a GPU ✅), whatever the
  reason, decided with the rest of the cell by ``model.cell``.
- **Feeds.** Ad-hoc runs (``valorch run --image``), bisect runs and ``--cpu-only`` runs
  of GPU images are "special": they feed a matrix only when asked for.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from .model import GPU_BACKENDS, Observation, verdict

SPECIAL_JOBS = ("adhoc", "bisect")
NO_VERDICT_JOBS = ("inventory",)  # store/inventory_queries.JOB: components only
# skip is final where the whole suite ran (deliberately not run)
NOT_FINAL = ("error", "skip", "missing")
CPU_ONLY_CLASS = "cpu only"
LOOKBACK = 16  # runs read past the settled point for checks that have no final verdict yet


def host_class(host_spec: Mapping[str, Any] | None, backend: str, cpu_only: bool) -> str:
    """The hardware class a run's results speak for: the GPUs a GPU image was given, else cpu."""
    if backend not in GPU_BACKENDS:
        return "cpu"
    if cpu_only:
        return CPU_ONLY_CLASS
    gpus = (host_spec or {}).get("gpus") or ()
    kinds = sorted(
        {f"{g.get('vendor', '?')} {g.get('arch', '?')}" for g in gpus if isinstance(g, Mapping)}
    )
    return " + ".join(kinds) or CPU_ONLY_CLASS


def special(job: str, backend: str, cpu_only: bool) -> bool:
    """Ad-hoc, bisect and --cpu-only-of-a-GPU-image runs: shown only when asked for."""
    return job in SPECIAL_JOBS or (cpu_only and backend in GPU_BACKENDS)


def feeds(
    job_name: str, backend: str, cpu_only: bool, *, job: str | None, include_special: bool
) -> bool:
    """Whether a run may speak for a matrix: ``job`` names the one job wanted (``adhoc`` and
    ``bisect`` included); otherwise named jobs only, special runs when ``include_special``.
    An inventory audit's run (job ``inventory``) holds components, no verdicts: never."""
    if job_name in NO_VERDICT_JOBS:
        return False
    if job is not None:
        return job_name == job and (
            include_special or not (cpu_only and backend in GPU_BACKENDS) or job in SPECIAL_JOBS
        )
    return include_special or not special(job_name, backend, cpu_only)


@dataclass(frozen=True)
class SuitePlan:
    """One task of a run: its suite, whether a check filter narrowed it, how it ended."""

    suite: str
    filtered: bool
    state: str


@dataclass(frozen=True)
class RunFacts:
    """What the walk needs of one run (a row of the run, image and host tables)."""

    run_id: str
    alias: str
    digest: str | None
    backend: str
    host: str
    host_class: str
    job: str
    started: datetime
    ended: datetime | None = None
    components: Mapping[str, Any] = field(default_factory=dict)

    @property
    def env(self) -> tuple[str, str]:
        return (self.alias, self.host_class)


@dataclass(frozen=True)
class Attempt:
    """One stored attempt of one check, as the walk reads it."""

    run_id: str
    suite: str | None  # the task's suite (None: a result stored without a task)
    check: str
    version: int
    feature: str
    kind: str
    attempt: int
    status: str
    message: str = ""
    device: str | None = None
    library: str | None = None


VERSION_ROWS = "env.version."  # checks that measure a version: the cell shows what was found


@dataclass
class _Chosen:
    run: RunFacts
    attempts: list[Attempt]

    @cached_property
    def verdict(self) -> str:
        return verdict(a.status for a in sorted(self.attempts, key=lambda a: a.attempt))


class EnvWalk:
    """One environment's runs, fed newest first; ``done`` once every suite it ever ran is
    settled and no check waits for a final verdict (or the lookback is spent)."""

    def __init__(self, env: tuple[str, str], suites: Iterable[str]) -> None:
        self.env = env
        self.suites = set(suites) or {"*"}
        self.settled: set[str] = set()
        self.newest: RunFacts | None = None
        self.runs_read = 0
        self._past_settled = 0
        self._version: dict[str, int] = {}
        self._final: dict[str, _Chosen] = {}
        self._newer: dict[str, _Chosen] = {}  # the newest not-final evidence above the final one
        self._order: list[list[str]] = []  # per run read, newest first: its checks in storage order
        # (run id, check) → measured version (version rows)
        self.values: dict[tuple[str, str], str] = {}

    @property
    def pending(self) -> set[str]:
        return set(self._newer) - set(self._final)

    @property
    def done(self) -> bool:
        if not self.suites <= self.settled:
            return False
        return not self.pending or self._past_settled >= LOOKBACK

    def feed(
        self,
        run: RunFacts,
        plans: Sequence[SuitePlan],
        attempts: Iterable[Attempt],
        state: str = "done",
    ) -> None:
        """Read one run (older than every run fed before)."""
        if self.newest is None:
            self.newest = run
        if self.suites <= self.settled:
            self._past_settled += 1
        self.runs_read += 1
        narrowed = {p.suite for p in plans if p.filtered}
        per_check: dict[str, list[Attempt]] = {}
        # the job's suite order (its tasks in plan order), whatever order they ran in
        position = {s: i for i, s in reversed(list(enumerate(p.suite for p in plans)))}
        for a in sorted(attempts, key=lambda a: position.get(a.suite or "", len(position))):
            suite = a.suite if plans else "*"
            known = a.check in self._final or a.check in self._newer
            if not known and suite in self.settled:
                continue  # a whole newer run of its suite does not have it: not this suite's check any more
            seen = self._version.setdefault(a.check, a.version)
            if a.version != seen:
                continue  # an older (or other) version of the check: another check
            per_check.setdefault(a.check, []).append(a)
        self._order.append(list(per_check))
        for check, found in per_check.items():
            if check in self._final:
                continue
            chosen = _Chosen(run, found)
            suite = found[0].suite if plans else "*"
            if chosen.verdict in NOT_FINAL and not (
                chosen.verdict == "skip" and suite not in narrowed
            ):
                self._newer.setdefault(check, chosen)
            else:
                self._final[check] = chosen
        if not plans:  # a run stored without tasks stands for everything it ran, if it ran anything
            if state == "done" and per_check:
                self.settled |= self.suites
            return
        for p in plans:
            if not p.filtered and p.state == "done":
                self.settled.add(p.suite)

    def chosen_runs(self, prefix: str) -> set[str]:
        """The runs whose attempts speak for the checks starting with ``prefix``."""
        return {
            c.run.run_id for k, c in {**self._newer, **self._final}.items() if k.startswith(prefix)
        }

    def observations(self, column: str) -> list[Observation]:
        """The chosen attempts of every check, each stamped with its evidence date and flags.
        Checks keep the order of the oldest run read that has them (a complete run's order),
        with checks only newer runs have after them: a narrow run does not reorder the rows."""
        out: list[Observation] = []
        newest_digest = self.newest.digest if self.newest else None
        order = list(dict.fromkeys(c for checks in reversed(self._order) for c in checks))
        for check in order:
            final, newer = self._final.get(check), self._newer.get(check)
            chosen = final or newer
            assert chosen is not None
            flags: list[str] = []
            note = ""
            if final is not None and newer is not None:
                flags.append("newer-inconclusive")
                last = sorted(newer.attempts, key=lambda a: a.attempt)[-1]
                note = (
                    f"newer run {newer.run.run_id[:8]} was {newer.verdict}: {last.message}".strip()
                )
            if newest_digest and chosen.run.digest and chosen.run.digest != newest_digest:
                flags.append("previous-digest")
            when = chosen.run.ended or chosen.run.started
            for a in sorted(chosen.attempts, key=lambda a: a.attempt):
                message = (
                    a.message if not note else (f"{a.message} ({note})" if a.message else note)
                )
                out.append(
                    Observation(
                        column=column,
                        check=a.check,
                        feature=a.feature,
                        kind=a.kind,
                        library=a.library,
                        status=a.status,
                        attempt=a.attempt,
                        run_id=a.run_id,
                        message=message,
                        when=when,
                        device=a.device,
                        flags=tuple(flags),
                        version=a.version,
                        value=self.values.get((a.run_id, a.check)),
                        backend=chosen.run.backend,  # with the device: cpu-only (model.cell)
                    )
                )
        return out


def column_labels(envs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """An environment's column name: the alias, with its host class where the alias has several
    (or where the class is "cpu only", which is never the image's GPU column)."""
    envs = list(dict.fromkeys(envs))
    classes = Counter(alias for alias, _cls in envs)  # how many host classes each alias has
    return {
        (alias, cls): alias if classes[alias] == 1 and cls != CPU_ONLY_CLASS else f"{alias} · {cls}"
        for alias, cls in envs
    }
