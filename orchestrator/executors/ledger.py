"""Which of the records a probe run delivered a task accepts (pure).

The probe's output is untrusted: a workload that reached the probe's stdout
could write well-formed result lines. The orchestrator knows the task's checks,
their order and the suite's attempts, and the probe reports in exactly that
order: each check in turn, attempts 1, 2, ... consecutively, a retry only after
a failing attempt, never beyond the suite's attempts, and the extra results a
check reports beside its own (a pytest workload's tests) right after it, for
the same attempt, with ids under the check's own (``<check>.``; ``pytest.``
for ``pytest.run``). So:

- a result for a check of the task that breaks that sequence (a duplicate, an
  attempt out of turn, a check before its predecessor finished) taints that
  check: it becomes ``error``, marked tampered, whatever it reported;
- anything that cannot be pinned to one check of the task (a result for a check
  the task does not have, a malformed marker line, a second meta or end record,
  a worker record out of turn, a record after the end) taints the whole task;
- a ``violation`` record from the probe (a forged line on the worker's pipe)
  taints the check it names, or the task.

Never first-wins, never last-wins: a tainted check keeps none of its results.
A forged line for the check in flight is accepted until the genuine one arrives
and collides with it; docs/architecture.md ("Untrusted workloads") says why it
cannot arrive alone where the probe's protections hold.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..spec import FAILING, CheckResult

MAX_REASONS = 5  # reasons kept per tainted check (the rest are counted)


def _family(owner: str) -> str:
    """The id prefix of a check's extra results: ``pytest.`` for ``pytest.run`` (its
    tests are ``pytest.<class>.<name>``), else the check's own id and a dot."""
    return "pytest." if owner == "pytest.run" else owner + "."


@dataclass
class Ledger:
    """What a task accepted, and what was tampered with."""

    results: list[CheckResult] = field(default_factory=list)
    tainted: dict[str, list[str]] = field(default_factory=dict)  # check id -> reasons
    # check id -> ids of its extra results
    extras_of: dict[str, set[str]] = field(default_factory=dict)
    task_reasons: list[str] = field(default_factory=list)
    cut_during: str | None = None  # the check expected next when the output was cut (a cap)
    last_attempt: dict[str, int] = field(default_factory=dict)
    # the check expected next when the transcript ended (running, if the probe died)
    running: str | None = None

    @property
    def violations(self) -> list[str]:
        out = list(self.task_reasons)
        for cid, reasons in self.tainted.items():
            out += [f"{cid}: {r}" for r in reasons]
        return out


def vet(events: Iterable[tuple[str, Any]], checks: Iterable[Any], attempts: int) -> Ledger:
    """Replay the transcript's records (in the order received) against the task's
    checks (CheckInfo, in the probe's order) and the suite's attempts."""
    return _Vetting([c.id for c in checks], attempts).run(events)


class _Vetting:
    def __init__(self, order: list[str], attempts: int) -> None:
        self.order = order
        self.pos = {cid: i for i, cid in enumerate(order)}
        self.attempts = attempts
        self.idx = 0  # the first check that has not finished
        self.done: set[str] = set()
        self.extras_owner: str | None = None  # the check whose extra results may follow now
        self.extras_seen: set[tuple[str, int]] = set()
        self.extras_of: dict[str, set[str]] = {}
        self.records = 0
        self.seen: dict[str, int] = {}
        self.ended = False
        self.led = Ledger()

    def run(self, events: Iterable[tuple[str, Any]]) -> Ledger:
        for kind, payload in events:
            self.event(kind, payload)
        self.led.extras_of = self.extras_of
        self.led.running = self._current()
        return self.led

    # -- records -------------------------------------------------------------
    def event(self, kind: str, payload: Any) -> None:
        first = self.records == 0
        self.records += 1
        if kind == "cut":  # the output passed a cap: the check expected next was in flight
            self.led.cut_during = self._current()
            return
        if self.ended:
            self._task(f"a {kind} record after the probe's end record")
            return
        if kind in ("result", "violation", "worker", "end") and "meta" not in self.seen:
            self._task(f"a {kind} record before the probe's meta record")
        if kind == "result":
            self._result(payload)
        elif kind == "violation":
            self._violation(payload)
        elif kind == "bad":
            self._task(str(payload))
        elif kind in ("meta", "fatal"):
            if not first:
                self._task(f"a {kind} record that is not the probe's first record")
            self.seen[kind] = self.seen.get(kind, 0) + 1
            self.ended = self.ended or kind == "fatal"  # the probe refused and left
        elif kind == "worker":
            n = payload.get("n") if isinstance(payload, dict) else None
            expected = self.seen.get("worker", 0) + 1
            if n != expected:
                self._task(
                    f"a worker record numbered {str(n)[:20]} where worker {expected} was next"
                )
            self.seen["worker"] = expected
        elif kind == "end":
            self.ended = True
        else:
            self._task(f"a {kind} record, which a suite run never sends")

    def _result(self, r: CheckResult) -> None:
        cid = r.check
        if cid not in self.pos:
            self._extra(r)
            return
        self.extras_owner = None
        if cid in self.led.tainted:
            self.extras_owner = cid  # its extras go with it, silently
            return
        current = self._current()
        last = self.led.last_attempt.get(cid, 0)
        if cid != current:
            if self.pos[cid] < self.idx or cid in self.done:
                what = (
                    f"a second result for attempt {r.attempt}"
                    if r.attempt <= last
                    else f"attempt {r.attempt} after the check had finished"
                )
            else:
                what = f"a result (attempt {r.attempt}) before {current} had finished"
            self._taint(cid, what)
            return
        if r.attempt != last + 1:
            self._taint(
                cid,
                f"a second result for attempt {r.attempt}"
                if r.attempt <= last
                else f"attempt {r.attempt} where attempt {last + 1} was next",
            )
            return
        if r.attempt > self.attempts:
            self._taint(cid, f"attempt {r.attempt}, beyond the suite's {self.attempts} attempt(s)")
            return
        self.led.results.append(r)
        self.led.last_attempt[cid] = r.attempt
        self.extras_owner = cid
        if r.status not in FAILING or r.attempt >= self.attempts:
            self.done.add(cid)
            self._advance()

    def _extra(self, r: CheckResult) -> None:
        """A result a check reports beside its own (a pytest workload's tests): only right
        after that check's result, for the same attempt, once, under the check's ids."""
        owner = self.extras_owner
        if owner is None or not r.check.startswith(_family(owner)):
            self._task(f"a result for {r.check!r}, which is not a check of this task")
            return
        key = (r.check, r.attempt)
        if r.attempt != self.led.last_attempt.get(owner) or key in self.extras_seen:
            why = "a second result" if key in self.extras_seen else "a result for another attempt"
            self._taint(owner, f"{why} for its test {r.check} (attempt {r.attempt})")
            return
        self.extras_seen.add(key)
        self.extras_of.setdefault(owner, set()).add(r.check)
        self.led.results.append(r)

    def _violation(self, v: Any) -> None:
        v = v if isinstance(v, dict) else {}
        cid, message = v.get("check"), str(v.get("message", ""))[:300]
        if isinstance(cid, str) and cid in self.pos:
            self._taint(cid, f"the probe saw a forged line while it ran: {message}")
        else:
            self._task(f"the probe saw a forged line between checks: {message}")

    # -- state ---------------------------------------------------------------
    def _current(self) -> str | None:
        return self.order[self.idx] if self.idx < len(self.order) else None

    def _advance(self) -> None:
        while self.idx < len(self.order) and (
            self.order[self.idx] in self.done or self.order[self.idx] in self.led.tainted
        ):
            self.idx += 1

    def _taint(self, cid: str, reason: str) -> None:
        reasons = self.led.tainted.setdefault(cid, [])
        if len(reasons) < MAX_REASONS:
            reasons.append(reason)
        elif len(reasons) == MAX_REASONS:
            reasons.append("and more")
        self._advance()

    def _task(self, reason: str) -> None:
        if len(self.led.task_reasons) < MAX_REASONS:
            self.led.task_reasons.append(reason)
        elif len(self.led.task_reasons) == MAX_REASONS:
            self.led.task_reasons.append("and more")
