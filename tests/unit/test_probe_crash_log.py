"""A crashed check's log is the stderr it wrote, whatever order the parent reads the
worker's two pipes in and however the stderr stream is cut into reads.

CI once caught the old mechanism losing it: the parent cleared the log when it read
``BEGIN`` on the protocol pipe, and one wake that found both pipes ready read stderr
first, so ``about to abort`` was cleared by the BEGIN written before it. The cut is
now a mark inside the stderr stream (runner.begin_mark), so only that stream's own
order matters; this property drives the parent's stderr reader with every cut."""

from hypothesis import given
from hypothesis import strategies as st

from valorch_probe.runner import begin_mark
from valorch_probe.supervisor import TAIL, _WorkerState

NONCE = "0f" * 16

writes = st.tuples(st.binary(max_size=40), st.integers(min_value=1, max_value=400)).map(
    lambda pair: pair[0] * pair[1]
)


@given(
    before=st.binary(max_size=200),
    logs=st.lists(writes, min_size=1, max_size=5),
    cuts=st.lists(st.integers(min_value=0, max_value=20_000), max_size=30),
)
def test_a_checks_log_is_what_it_wrote_after_its_mark(before, logs, cuts):
    mark = begin_mark(NONCE)
    stream = before + b"".join(mark + log for log in logs)
    w = _WorkerState(None, NONCE, deadline=0.0, ack=lambda: None)
    edges = sorted({0, len(stream), *(c % (len(stream) + 1) for c in cuts)})
    for start, end in zip(edges, edges[1:]):
        w.stderr(stream[start:end])
    assert w.tail == logs[-1][-TAIL:]


def test_stderr_before_the_first_check_stays_for_a_worker_that_dies_importing():
    w = _WorkerState(None, NONCE, deadline=0.0, ack=lambda: None)
    w.stderr(b"ImportError: libcudart.so.12\n")
    assert w.tail == b"ImportError: libcudart.so.12\n"
