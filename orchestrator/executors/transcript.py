"""Reading what a probe printed. Its output is untrusted: lines are size-capped,
only lines behind the marker count, anything that does not validate is a
protocol violation instead of an exception, and ``conclude`` accepts only the
task's own checks, once per attempt, in the order the probe runs them
(``ledger.py``): a forged result taints its check (or the task) as
``error``, marked tampered."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from .. import encode, netbody
from ..checks_manifest import manifest
from ..spec import MAX_MESSAGE, Backend, CheckInfo, CheckResult, Execution, Status, Task
from .ledger import Ledger, vet

MAX_LINE = 1 << 20  # bytes in one protocol line
MAX_TOTAL = 64 << 20  # bytes of stdout read from one container
MAX_RESULTS = 20_000
MAX_EVENTS = MAX_RESULTS + 2_000  # records of every kind
TAMPERED = "tampered: "  # message prefix of a check whose results were tampered with (metrics: tampered=True)
FLOODED = "output flood: "  # message prefix of the check in flight when the output cap was hit


@dataclass
class Transcript:
    """Accumulates a probe's stdout, chunk by chunk. ``events`` keeps every record
    in the order received, for ``conclude`` to vet; ``results`` are the result
    lines that validated, and ``on_result`` sees each once, as soon as it is read
    (unvetted: for the live view only; what is stored is what ``conclude`` accepts)."""

    on_result: Callable[[CheckResult], None] | None = None
    results: list[CheckResult] = field(default_factory=list)
    events: list[tuple[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    workers: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None
    inventory: dict[str, Any] | None = None
    fatal: str | None = None
    ignored_lines: int = 0
    total: int = 0
    discarded: int = 0
    truncated: bool = False
    cut_reason: str = ""
    _buf: bytes = b""
    _skipping: bool = False
    _relayed: int = 0
    _marker: bytes = field(default_factory=lambda: manifest().marker.encode(), repr=False)

    def feed(self, chunk: bytes) -> None:
        if self.truncated:
            self.discarded += len(chunk)
            return
        room = MAX_TOTAL - self.total
        self.total += min(len(chunk), room)
        if len(chunk) > room:
            self._take(chunk[:room])
            self.discarded += len(chunk) - room
            self._cut(f"the probe's output passed its cap of {MAX_TOTAL >> 20} MiB")
        else:
            self._take(chunk)
        self._relay()

    def _relay(self) -> None:
        if self.on_result is not None:
            for res in self.results[self._relayed :]:
                self.on_result(res)
        self._relayed = len(self.results)

    def close(self) -> None:
        if self._buf and not self.truncated and not self._skipping:
            self._line(self._buf)
        self._buf = b""
        self._relay()

    def _take(self, chunk: bytes) -> None:
        if self._skipping:  # the rest of an over-long line
            nl = chunk.find(b"\n")
            if nl < 0:
                return
            chunk, self._skipping = chunk[nl + 1 :], False
        lines = (self._buf + chunk).split(b"\n")
        self._buf = lines.pop()
        for line in lines:
            if self.truncated:
                return
            self._line(line)
        if len(self._buf) > MAX_LINE:
            if self._buf.startswith(self._marker):
                self._event(
                    "bad", f"a marker line longer than {MAX_LINE} bytes: {self._buf[:120]!r}"
                )
            else:
                self.ignored_lines += 1
            self._buf, self._skipping = b"", True

    def _line(self, raw: bytes) -> None:
        if not raw.startswith(self._marker):
            self.ignored_lines += 1
            return
        try:
            # a line is at most MAX_LINE; its nesting is bounded too (no RecursionError)
            obj = netbody.loads(raw[len(self._marker) :].decode("utf-8"), MAX_LINE, int64=False)
            if b"\\u" in raw:  # only an escape can carry a lone surrogate (UTF-8 cannot)
                obj = encode.well_formed(obj)
            if not isinstance(obj, dict):
                raise ValueError("not a JSON object")
        except (ValueError, UnicodeDecodeError) as exc:
            self._event("bad", f"malformed marker line ({str(exc)[:200]}): {raw[:200]!r}")
            return
        kind = obj.pop("type", "result")
        if kind == "result":
            self._result(obj)
        elif kind == "meta":
            self.meta = self.meta or _bounded(obj)
            self._event("meta", None)
        elif kind == "worker":
            if len(self.workers) < 1000:
                self.workers.append(_bounded(obj))
            self._event("worker", {"n": obj.get("n")})
        elif kind == "end":
            self.end = _bounded(obj)
            self._event("end", None)
        elif kind == "inventory":
            self.inventory = self.inventory if self.inventory is not None else obj
            self._event("inventory", None)
        elif kind == "fatal":
            self.fatal = self.fatal or str(obj.get("message", ""))[:2000]
            self._event("fatal", None)
        elif kind == "violation":
            self._event(
                "violation",
                {"check": obj.get("check"), "message": str(obj.get("message", ""))[:500]},
            )
        else:
            self._event("bad", f"unknown record type {str(kind)[:50]!r}")

    def _result(self, obj: dict[str, Any]) -> None:
        if len(self.results) >= MAX_RESULTS:
            self._cut(f"the probe sent more than {MAX_RESULTS} results")
            return
        try:
            res = CheckResult.model_validate(obj)
        except ValidationError as exc:
            name = str(obj.get("check", "?"))[:100]
            first = exc.errors()[0]
            message = f"result for {name!r} does not validate: {first['loc']}: {first['msg']}"
            attempt = obj.get("attempt")
            try:  # the check's own output did not validate: an error of that check, at that attempt
                res = CheckResult(
                    check=name,
                    status="error",
                    message=message,
                    attempt=attempt if isinstance(attempt, int) and 1 <= attempt <= 1000 else 1,
                )
            except ValidationError:  # not even a check's id: nothing to pin the error to
                self._event("bad", message)
                return
        self.results.append(res)
        self._event("result", res)

    def _event(self, kind: str, payload: Any) -> None:
        if len(self.events) >= MAX_EVENTS:
            self._cut(f"the probe sent more than {MAX_EVENTS} records")
            return
        self.events.append((kind, payload))

    def _cut(self, reason: str) -> None:
        if not self.truncated:
            self.truncated, self.cut_reason = True, reason
            self.events.append(("cut", reason))
            self._buf = b""

    def breakdown(self) -> dict[str, float]:
        """Where the time went inside the container: framework imports, check bodies, workers."""
        return {
            "import_s": sum(float(w.get("import_s") or 0.0) for w in self.workers),
            "checks_s": sum(r.duration_s for r in self.results),
            "workers": float(len(self.workers)),
            "probe_wall_s": float((self.end or {}).get("wall_s") or 0.0),
        }


def _bounded(obj: dict[str, Any]) -> dict[str, Any]:
    text = json.dumps(obj, default=str)
    return obj if len(text) < 200_000 else {"truncated": True}


def vetted(transcript: Transcript, task: Task) -> tuple[list[CheckResult], Ledger]:
    """The results a task accepts from a transcript: its own checks, once per attempt,
    in order; a tampered check (or the whole task) as one ``error`` marked tampered;
    the check in flight when the output was cut as an ``error`` naming the cap."""
    transcript.close()
    led = vet(transcript.events, task.checks, task.suite.attempts)
    infos = {c.id: c for c in task.checks}
    if led.task_reasons:
        why = "; ".join(led.task_reasons)
        return [
            _tampered(info, f"the task's output was tampered with ({why})") for info in task.checks
        ], led
    dropped = set(led.tainted) | {x for cid in led.tainted for x in led.extras_of.get(cid, ())}
    kept = [r for r in led.results if r.check not in dropped]
    for cid, reasons in led.tainted.items():
        kept.append(_tampered(infos[cid], "; ".join(reasons)))
    cut = led.cut_during
    if cut is not None and cut not in led.tainted:
        info = infos[cut]
        message = (
            f"{FLOODED}{transcript.cut_reason} while this check was running ({transcript.discarded} "
            "more bytes discarded); the results received before it are kept"
        )
        metrics = {"output_capped": True, "cap_bytes": MAX_TOTAL}
        attempt = led.last_attempt.get(cut, 0) + 1
        kept.append(_result(info, "error", message, attempt=attempt, metrics=metrics))
    return kept, led


def _distrust_last(
    results: list[CheckResult], transcript: Transcript, task: Task, how: str
) -> list[CheckResult]:
    """A probe that died by a signal valorch did not send (on the host, a workload of the
    same user can send one) may have been killed right after a result was forged in its
    name: the check that reported last is not trusted, and is marked tampered. Fail
    closed: a genuine result that was last before such a death is lost with it."""
    last = next((p.check for kind, p in reversed(transcript.events) if kind == "result"), None)
    infos = {c.id: c for c in task.checks}
    if last not in infos:
        return results
    why = f"the probe was killed by {how} from inside the run right after this check reported"
    return [r for r in results if r.check != last] + [_tampered(infos[last], why)]


def _tampered(info: CheckInfo, why: str) -> CheckResult:
    message = f"{TAMPERED}its results were tampered with, none is kept: {why}"
    return _result(info, "error", message, metrics={"tampered": True})


def _result(info: CheckInfo, status: Status, message: str, **more: Any) -> CheckResult:
    """A result the host writes for an expected check (its id, feature, kind, version)."""
    return CheckResult(
        check=info.id,
        status=status,
        feature=info.feature,
        kind=info.kind,
        version=info.version,
        message=message,
        **more,
    )


def conclude(
    transcript: Transcript,
    task: Task,
    *,
    exit_code: int | None,
    killed: str | None = None,
    log: str = "",
    signalled: bool | None = None,
    cause: str | None = None,
    killed_from_inside: bool = False,
    **meta: Any,
) -> Execution:
    """The one place that turns how a probe ended into an Execution: every expected check
    that never reported gets a result saying why (killed at a deadline, refused, died, or
    silently missing), so that no check disappears. ``killed`` is the message when the probe
    was killed at a deadline; ``signalled`` says whether the exit code means death by a
    signal (default: >= 128, a container's convention; a local process passes ``exit_code < 0``)."""
    results, led = vetted(transcript, task)
    if killed_from_inside:
        results = _distrust_last(results, transcript, task, _signal_name(exit_code))
    if signalled is None:
        signalled = exit_code is not None and exit_code >= 128
    status: Status = "error"
    why, died = "the probe never reported this check", False
    if transcript.truncated:
        why = f"not reported: {transcript.cut_reason}, and the rest was discarded"
    elif killed:
        status, why = "timeout", killed
    elif transcript.fatal:
        why = f"probe refused to run: {transcript.fatal}"
    elif signalled or (cause and exit_code != 0):
        died = True  # a signal or the OOM killer: the check it hit crashed, the rest rerun
    elif exit_code != 0:
        why = f"the probe exited with code {exit_code} before reporting"
    if died:
        reason = cause or _signal_name(exit_code)
        results = probe_killed(results, task.checks, led.running, reason, log)
    else:
        results = complete(results, task.checks, status, why, log)
    return Execution(
        results=tuple(not_applicable(results, task)),
        exit_code=exit_code,
        meta={
            **transcript.meta,
            "workers": transcript.workers,
            "end": transcript.end,
            "stderr_tail": log[-2000:],
            "ignored_lines": transcript.ignored_lines,
            "protocol": {
                "violations": led.violations[:20],
                "bytes": transcript.total,
                "cut": transcript.cut_reason,
                "discarded": transcript.discarded,
            },
            **meta,
        },
    )


NOT_RUN = "not run: the probe was killed by "
NOT_APPLICABLE_WHY = "not applicable: a GPU row on a CPU image"
#: the metric the probe sets on an ``unsupported`` whose module the image does not have
#: (valorch_probe/context.py NOT_INSTALLED; tests/unit/test_transcript_vetting.py keeps them equal)
NOT_INSTALLED = "not_installed"
#: a check that serves one vendor's GPUs declares it among its needs (probe registry, VENDORS)
VENDORS = {"amd": "ROCm", "nvidia": "CUDA"}
#: what a row of another vendor keeps: the harness's own failures say nothing of the row
_HARNESS = ("crash", "timeout", "error")


def inapplicable(check: CheckInfo, backend: Backend, result: CheckResult) -> str:
    """Why ``result`` of ``check`` does not apply to an image of ``backend``, or "".

    The one rule for rows that do not apply: a row declared for one vendor's GPUs
    (``needs`` names ``amd`` or ``nvidia``) on any other image, whatever the probe said of
    it but the harness's own failures; and a GPU row on a CPU image that was not run
    (``skip``: no GPU; ``unsupported``: torch has no cuda.tunable) unless the image lacks the
    module it needs (not installed is ⊘ on any image)."""
    vendor = next((v for v in check.needs if v in VENDORS), None)
    if vendor and vendor != backend.vendor and result.status not in _HARNESS:
        return "not applicable: a %s row on a %s image" % (VENDORS[vendor], backend.value.upper())
    if (
        not backend.gpu
        and "gpu" in check.needs
        and result.status in ("skip", "unsupported")
        and NOT_INSTALLED not in result.metrics
    ):
        return NOT_APPLICABLE_WHY
    return ""


def not_applicable(results: Iterable[CheckResult], task: Task) -> list[CheckResult]:
    """Each result whose row does not apply to the task's image (``inapplicable``) is
    ``n/a``, blank and counted nowhere (docs/statuses.md), in every sink alike. A GPU image
    run without GPUs keeps its ``skip``: the row applies, this host just could not run it."""
    checks = {c.id: c for c in task.checks}
    out = []
    for r in results:
        why = inapplicable(checks[r.check], task.image.backend, r) if r.check in checks else ""
        out.append(
            r.model_copy(
                update={"status": "n/a", "message": f"{why}: {r.message.rstrip('.')}"[:MAX_MESSAGE]}
            )
            if why and r.status != "n/a"
            else r
        )
    return out


def _signal_name(exit_code: int | None) -> str:
    import signal

    number = (exit_code or 0) - 128 if (exit_code or 0) >= 128 else -(exit_code or 0)
    try:
        return f"{signal.Signals(number).name} (exit code {exit_code})"
    except ValueError:
        return f"a signal (exit code {exit_code})"


def probe_killed(
    results: list[CheckResult],
    expected: Iterable[CheckInfo],
    running: str | None,
    cause: str,
    log: str = "",
) -> list[CheckResult]:
    """The probe died (a signal, the OOM killer): the check it was running is ``crash``
    (it ran, and the process died under it); every check after it never ran and is
    ``error`` "not run: …, after check X", marked ``not_run`` so that the executor runs
    them again once in a fresh container: one check's abuse costs only its own result."""
    results = list(results)
    reported = {r.check for r in results}
    crashed = f"the probe was killed by {cause} while this check ran"
    after = f"{NOT_RUN}{cause}, after check {running or 'the last reported one'}"
    for info in expected:
        if info.id in reported:
            continue
        if info.id == running:
            results.append(_result(info, "crash", crashed, log=log))
        else:
            results.append(_result(info, "error", after, log=log, metrics={"not_run": True}))
    return results


def not_run(execution: Execution) -> list[str]:
    """The checks a killed probe never ran (probe_killed): to run again, once."""
    return [r.check for r in execution.results if r.metrics.get("not_run")]


def rerun_task(task: Task, checks: Iterable[str]) -> Task:
    """The same task restricted to ``checks`` (by exact id), for a fresh container."""
    ids = set(checks)
    return task.model_copy(
        update={
            "checks": tuple(c for c in task.checks if c.id in ids),
            "suite": task.suite.model_copy(update={"checks": tuple(sorted(ids))}),
        }
    )


def with_rerun(first: Execution, second: Execution) -> Execution:
    """The first container's results with its not-run checks replaced by the fresh one's."""
    again = set(not_run(first))
    results = [r for r in first.results if r.check not in again] + [
        r for r in second.results if r.check in again
    ]
    return first.model_copy(
        update={
            "results": tuple(results),
            "timings": {**first.timings, "rerun_s": second.timings.get("total_s", 0.0)},
            "meta": {
                **first.meta,
                "rerun": {
                    "checks": sorted(again),
                    "exit_code": second.exit_code,
                    "why": "the probe was killed before these checks ran",
                },
            },
        }
    )


def infrastructure_failure(task: Task, message: str, **fields: Any) -> Execution:
    """Every check of a task that could not run at all: ``error`` (inconclusive)."""
    return Execution(
        results=tuple(complete([], task.checks, "error", message)), infra_error=message, **fields
    )


def complete(
    results: Iterable[CheckResult],
    expected: Iterable[CheckInfo],
    status: Status,
    message: str,
    log: str = "",
) -> list[CheckResult]:
    """Add a result for every expected check that never reported (the container died
    or was killed), so that no check silently disappears."""
    results = list(results)
    reported = {r.check for r in results}
    for info in expected:
        if info.id not in reported:
            results.append(_result(info, status, message, log=log))
    return results
