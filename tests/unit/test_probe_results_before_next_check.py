"""A check's results reach the probe's stdout before the next check begins.

A workload can write straight to the container's stdout (``/proc/1/fd/1`` in a
container that allows it): 200 MB of it passes the host's cap, and whatever the
supervisor had not yet forwarded is lost behind the flood. CI once lost a check
that had passed this way: its result was still on the worker's pipe when the next
check's flood began. The worker now waits, after each check's results, for the
supervisor's acknowledgement that it forwarded them (``runner.synced``). These
tests play the supervisor's part against a real forked worker."""

import os
import selectors
from types import SimpleNamespace

import pytest

from valorch_probe.loader import select
from valorch_probe.supervisor import Forked, _WorkerState

NONCE = "a1" * 16


class Lines:
    """The worker's protocol pipe read line by line (nonce removed); what one read brought
    beyond the line asked for is kept for the next ask."""

    def __init__(self, proc):
        self.fd, self.buf, self.ready = proc.stdout, b"", []

    def until(self, want, timeout):
        """The lines until one starting with ``want`` and that line, or every line that came
        within ``timeout`` seconds and None (the pipe went quiet, or ended)."""
        seen = []
        with selectors.DefaultSelector() as sel:
            sel.register(self.fd, selectors.EVENT_READ)
            while True:
                while self.ready:
                    text = self.ready.pop(0)
                    seen.append(text)
                    if text.startswith(want):
                        return seen, text
                if not sel.select(timeout=timeout):
                    return seen, None
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    return seen, None
                *done, self.buf = (self.buf + chunk).split(b"\n")
                self.ready += [raw.decode()[len(NONCE) + 1 :] for raw in done]


@pytest.fixture
def worker():
    select("selftest")
    config = {
        "suite": "selftest",
        "ids": ["selftest.pass", "selftest.after"],
        "expect": None,
        "device": "cpu",
        "attempts": 1,
        "first_attempt": {},
        "nonce": NONCE,
    }
    proc = Forked(config)
    yield proc
    proc.kill()
    proc.wait()
    proc.close()


def test_the_next_check_waits_for_the_acknowledgement(worker):
    lines = Lines(worker)
    seen, sync = lines.until("SYNC", timeout=60)
    assert sync == "SYNC", seen
    assert [t.split(" ")[0] for t in seen] == ["READY", "BEGIN", "RESULT", "SYNC"]
    assert '"check": "selftest.pass"' in seen[2]
    # Unacknowledged, the worker begins nothing more, however long the parent takes.
    quiet, nothing = lines.until("BEGIN", timeout=0.5)
    assert (quiet, nothing) == ([], None)
    worker.ack()
    seen, begin = lines.until("BEGIN", timeout=60)
    assert begin == "BEGIN selftest.after 1", seen
    seen, sync = lines.until("SYNC", timeout=60)
    assert sync == "SYNC" and '"check": "selftest.after"' in seen[0]
    worker.ack()
    assert worker.wait() == 0


def test_a_worker_whose_parent_stops_listening_is_not_held(worker):
    """An ended acknowledgement pipe releases the worker: it runs to its end."""
    os.close(worker.ack_w)
    worker.ack_w = os.open(os.devnull, os.O_WRONLY)  # closed again by the fixture
    seen, _ = Lines(worker).until("never", timeout=60)
    assert [t.split(" ")[0] for t in seen] == ["READY"] + ["BEGIN", "RESULT", "SYNC"] * 2
    assert worker.wait() == 0


def test_the_supervisor_acknowledges_only_after_forwarding(tmp_path):
    """The parent's side: SYNC is answered after the RESULT before it was written out."""
    out = open(tmp_path / "stdout", "w")  # noqa: SIM115 (closed below)
    order = []

    sup = SimpleNamespace(  # what _WorkerState uses of the supervisor
        args=SimpleNamespace(deadline=5.0, attempts=1),
        remaining=["selftest.pass"],
        out=out,
        import_s=0.0,
        workers=1,
    )
    w = _WorkerState(sup, NONCE, 0.0, ack=lambda: order.append(out.tell()))
    w.line(f'{NONCE} RESULT {{"check": "selftest.pass", "status": "pass", "attempt": 1}}'.encode())
    w.line(f"{NONCE} SYNC".encode())
    out.close()
    written = (tmp_path / "stdout").read_text()
    assert '"check": "selftest.pass"' in written and order == [len(written)]
    # a SYNC without the nonce is a violation, never an acknowledgement
    sup.out = open(tmp_path / "again", "w")  # noqa: SIM115
    w.line(b"SYNC")
    sup.out.close()
    assert order == [len(written)] and "violation" in (tmp_path / "again").read_text()
