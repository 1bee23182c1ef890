"""Reading what a probe printed. Its output is untrusted: lines are size-capped,
only lines behind the marker count, and anything that does not validate
becomes an ``error`` result instead of an exception."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from pydantic import ValidationError

from ..probe import MARKER
from ..spec import CheckInfo, CheckResult, Execution

MAX_LINE = 1 << 20  # bytes in one protocol line
MAX_TOTAL = 64 << 20  # bytes of stdout read from one container
MAX_RESULTS = 20_000


@dataclass
class Transcript:
    """Accumulates a probe's stdout, chunk by chunk; ``on_result`` sees each accepted
    result once, as soon as it is read (the live view)."""

    on_result: Callable[[CheckResult], None] | None = None
    results: list[CheckResult] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    workers: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None
    inventory: dict[str, Any] | None = None
    fatal: str | None = None
    ignored_lines: int = 0
    total: int = 0
    truncated: bool = False
    _buf: bytes = b""
    _relayed: int = 0

    def feed(self, chunk: bytes) -> None:
        if self.truncated:
            return
        self.total += len(chunk)
        if self.total > MAX_TOTAL:
            self.truncated = True
            self._protocol_error(f"probe output exceeded {MAX_TOTAL >> 20} MiB; the rest was discarded")
            return
        self._buf += chunk
        while b"\n" in self._buf:
            line, self._buf = self._buf.split(b"\n", 1)
            self._line(line)
        if len(self._buf) > MAX_LINE:
            self._protocol_error(f"a line longer than {MAX_LINE} bytes was discarded")
            self._buf = b""
        self._relay()

    def _relay(self) -> None:
        if self.on_result is not None:
            for res in self.results[self._relayed:]:
                self.on_result(res)
        self._relayed = len(self.results)

    def close(self) -> None:
        if self._buf:
            self._line(self._buf)
            self._buf = b""
        self._relay()

    def _line(self, raw: bytes) -> None:
        marker = MARKER.encode()
        if not raw.startswith(marker):
            self.ignored_lines += 1
            return
        if len(raw) > MAX_LINE:
            self._protocol_error(f"a result line longer than {MAX_LINE} bytes was discarded")
            return
        try:
            obj = json.loads(raw[len(marker):].decode("utf-8"))
            if not isinstance(obj, dict):
                raise ValueError("not a JSON object")
        except (ValueError, UnicodeDecodeError) as exc:
            self._protocol_error(f"malformed result line ({exc}): {raw[:200]!r}")
            return
        kind = obj.pop("type", "result")
        if kind == "result":
            if len(self.results) >= MAX_RESULTS:
                self._protocol_error(f"more than {MAX_RESULTS} results; the rest were discarded")
                return
            try:
                self.results.append(CheckResult.model_validate(obj))
            except ValidationError as exc:
                name = str(obj.get("check", "?"))[:100]
                self._protocol_error(f"result for {name!r} does not validate: "
                                     f"{exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}",
                                     check=name if _valid_id(name) else None)
        elif kind == "meta":
            self.meta = _bounded(obj)
        elif kind == "worker":
            if len(self.workers) < 1000:
                self.workers.append(_bounded(obj))
        elif kind == "end":
            self.end = _bounded(obj)
        elif kind == "inventory":
            self.inventory = obj
        elif kind == "fatal":
            self.fatal = str(obj.get("message", ""))[:2000]
        else:
            self._protocol_error(f"unknown record type {str(kind)[:50]!r}")

    def breakdown(self) -> dict[str, float]:
        """Where the time went inside the container: framework imports, check bodies, workers."""
        return {"import_s": sum(float(w.get("import_s") or 0.0) for w in self.workers),
                "checks_s": sum(r.duration_s for r in self.results),
                "workers": float(len(self.workers)),
                "probe_wall_s": float((self.end or {}).get("wall_s") or 0.0)}

    def _protocol_error(self, message: str, check: str | None = None) -> None:
        self.results.append(CheckResult(check=check or "harness.protocol", status="error",
                                        feature="Harness", kind="selftest", message=message))


def _valid_id(name: str) -> bool:
    try:
        CheckResult(check=name, status="error")
        return True
    except ValidationError:
        return False


def _bounded(obj: dict[str, Any]) -> dict[str, Any]:
    text = json.dumps(obj, default=str)
    return obj if len(text) < 200_000 else {"truncated": True}


def conclude(transcript: Transcript, task: Any, *, exit_code: int | None, killed: str | None = None,
             log: str = "", signalled: bool | None = None, **meta: Any) -> Execution:
    """The one place that turns how a probe ended into an Execution: every expected
    check that never reported gets a result saying why (killed at a deadline,
    refused, died, or silently missing), so that no check disappears.

    ``killed`` is the message when the probe was killed at a deadline; ``signalled``
    says whether the exit code means death by a signal (default: >= 128, a
    container's convention; a local process passes ``exit_code < 0``)."""
    transcript.close()
    results: list[CheckResult] = transcript.results
    if signalled is None:
        signalled = exit_code is not None and exit_code >= 128
    if killed:
        results = complete(results, task.checks, "timeout", killed, log)
    elif transcript.fatal:
        results = complete(results, task.checks, "error", f"probe refused to run: {transcript.fatal}", log)
    elif exit_code != 0:
        results = complete(results, task.checks, "crash" if signalled else "error",
                           f"the probe exited with code {exit_code} before reporting", log)
    else:
        results = complete(results, task.checks, "error", "the probe never reported this check", log)
    return Execution(results=tuple(results), exit_code=exit_code,
                     meta={**transcript.meta, "workers": transcript.workers, "end": transcript.end,
                           "stderr_tail": log[-2000:], "ignored_lines": transcript.ignored_lines, **meta})


def infrastructure_failure(task: Any, message: str, **fields: Any) -> Execution:
    """Every check of a task that could not run at all: ``error`` (inconclusive)."""
    return Execution(results=tuple(complete([], task.checks, "error", message)), infra_error=message, **fields)


def complete(results: Iterable[CheckResult], expected: Iterable[CheckInfo], status: str,
             message: str, log: str = "") -> list[CheckResult]:
    """Add a result for every expected check that never reported (the container died
    or was killed), so that no check silently disappears."""
    results = list(results)
    reported = {r.check for r in results}
    for info in expected:
        if info.id not in reported:
            results.append(CheckResult(check=info.id, status=status, feature=info.feature, kind=info.kind,
                                       version=info.version, library=info.library, message=message,
                                       log=log))
    return results
