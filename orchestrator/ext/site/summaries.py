"""The median, quartiles and robust CV of every passing result's samples, made by a second
process while the build's own process reads the results (ext/site/service.py).

On a large store the summaries are half of that read, the longest serial part of a build,
and the machine's other core is idle then (docs/benchmarks.md, "Static site build"). The
second process is a fresh interpreter (``command``: ``python -I`` running ``main``), not a
fork: a SQLite connection must not cross a fork, and what it imports (the standard library and three
small modules: store/sample_reader.py, store/samples_codec.py, ext/site/quartiles.py)
takes milliseconds. It reads the store on a read-only connection of its own and sends
the summaries back on its stdout in frames, in result id order.

Only an optimisation, never a source of truth: a result the process did not summarise
(the store changed between the two reads, a value it could not decode, the process
failed, ended early or could not start) is summarised in the build's process, from the
samples it read itself, by the same function (quartiles.summary).
"""

from __future__ import annotations

import contextlib
import math
import os
import struct
import subprocess
import sys
from array import array
from pathlib import Path
from typing import BinaryIO

FRAME = 4096  # results per frame
_HEAD = struct.Struct("=I")  # the results in the frame that follows
_ITEM = 8 + 4 * 8 + 4  # a result's id (q), median, q1, q3, CV (d), sample count (i)
_PIPE_SIZE = 1 << 20  # F_SETPIPE_SZ: the producer runs up to a megabyte ahead
#: one summary: (median, q1, q3, robust CV or None, sample count)
Made = tuple[float, float, float, float | None, int]


class Summaries:
    """The summaries another process makes of ``source`` (site_queries.passing_samples_source:
    the SQLite file and the statement), asked for by result id in increasing order."""

    def __init__(self, source: tuple[str, str] | None) -> None:
        self.known: dict[int, Made] = {}
        self.upto: float = math.inf  # every id up to this one has come (inf: nothing more will)
        self.proc: subprocess.Popen[bytes] | None = None
        if source is None:
            return
        try:
            self.proc = subprocess.Popen(
                command(*source),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError:  # no process: every summary is made here
            return
        self.upto = -1

    def get(self, result_id: int) -> Made | None:
        """The summary of ``result_id``, or None where the process has none (then the caller
        makes it). Waits for the process's frames up to that id."""
        while result_id > self.upto:
            self._frame()
        return self.known.pop(result_id, None)

    def _frame(self) -> None:
        head = self._read(_HEAD.size)
        count = _HEAD.unpack(head)[0] if head else 0
        body = self._read(count * _ITEM) if 0 < count <= FRAME else None
        if not body:  # the process ended (or sent what does not parse): no more frames
            self.close()
            return
        n = len(body) // _ITEM
        ids, values, counts = array("q"), array("d"), array("i")
        ids.frombytes(body[: 8 * n])
        values.frombytes(body[8 * n : 40 * n])
        counts.frombytes(body[40 * n :])
        cvs = values[3::4]
        self.known.update(
            zip(
                ids,
                zip(
                    values[0::4],
                    values[1::4],
                    values[2::4],
                    [None if k < 0 else cv for k, cv in zip(counts, cvs, strict=True)],
                    [-k if k < 0 else k for k in counts],
                    strict=True,
                ),
                strict=True,
            )
        )
        self.upto = ids[-1]

    def _read(self, size: int) -> bytes | None:
        """Exactly ``size`` bytes of the process's stdout, or None where it ended first."""
        if self.proc is None or self.proc.stdout is None:
            return None
        got = self.proc.stdout.read(size)  # buffered: reads on until ``size`` or the end
        return got if len(got) == size else None

    def close(self) -> None:
        """Stop the process (done or not) and wait for it; what is known stays."""
        self.upto = math.inf
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


# the second process's first lines: this checkout's (or install's) valorch first on its path,
# and neither the working directory (a file there must not shadow a module) nor any PYTHON*
# variable (-I) in it
_BOOT = (
    "import sys; sys.path[:] = [sys.argv[1]] + [p for p in sys.path if p not in ('', '.')]; "
    "from orchestrator.ext.site.summaries import main; main(sys.argv[2:])"
)


def command(path: str, sql: str) -> list[str]:
    """The second process's command line: summaries of what ``sql`` selects from ``path``."""
    root = str(Path(__file__).resolve().parents[3])
    return [sys.executable, "-I", "-c", _BOOT, root, path, sql]


def main(argv: list[str]) -> None:
    """The second process: exit 0 once every summary is sent, 1 on any failure (the build
    then makes the rest itself)."""
    try:
        _produce(argv[0], argv[1])
    except Exception:  # noqa: BLE001 - whatever it is, the build makes the rest itself
        sys.exit(1)


def _produce(path: str, sql: str) -> None:
    """The second process: summaries of every result ``sql`` selects, in frames on stdout."""
    from orchestrator.ext.site.quartiles import summary
    from orchestrator.store.sample_reader import passing_samples
    from orchestrator.store.samples_codec import samples_tuple

    with contextlib.suppress(OSError, AttributeError):  # Linux: a larger pipe, fewer waits
        import fcntl

        fcntl.fcntl(1, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
    out = os.fdopen(1, "wb")
    ids, values, counts = array("q"), array("d"), array("i")
    for result_id, raw in passing_samples(path, sql):
        try:
            samples = samples_tuple(raw)
        except (ValueError, TypeError, OverflowError, struct.error):
            continue  # the build's process reads it too, and names the damaged value
        if len(samples) < 3:
            continue
        med, q1, q3, cv = summary(samples)
        ids.append(result_id)
        values.extend((med, q1, q3, 0.0 if cv is None else cv))
        counts.append(-len(samples) if cv is None else len(samples))  # negative: no CV
        if len(ids) >= FRAME:
            _send(out, ids, values, counts)
            del ids[:], values[:], counts[:]
    if ids:
        _send(out, ids, values, counts)


def _send(out: BinaryIO, ids: array[int], values: array[float], counts: array[int]) -> None:
    out.write(_HEAD.pack(len(ids)) + ids.tobytes() + values.tobytes() + counts.tobytes())
    out.flush()
