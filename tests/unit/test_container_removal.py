"""A container that ran to its end is removed in the background while its results are
stored (``executors/cleanup``), and the command waits for that removal before it ends; a
container whose run failed is removed before the error leaves ``run_container``. A stand-in
engine client, no engine."""

import threading

import docker.errors
import pytest

from orchestrator.executors import cleanup
from orchestrator.executors.docker import run_container


class Container:
    def __init__(self, fail_start: bool = False) -> None:
        self.id = "c0ffee"
        self.attrs = {"State": {"OOMKilled": False}}
        self.fail_start = fail_start
        self.release = threading.Event()  # the removal waits for the test
        self.entered = threading.Event()
        self.removed: list[dict] = []
        self.removed_in: list[threading.Thread] = []

    def put_archive(self, path, data):
        return True

    def attach(self, **kw):
        return iter([(b"line\n", None), (None, b"err\n")])

    def start(self):
        if self.fail_start:
            raise docker.errors.APIError("the engine refused the start")

    def wait(self, timeout=None):
        return {"StatusCode": 0}

    def reload(self):
        pass

    def kill(self):
        pass

    def remove(self, **kw):
        self.removed_in.append(threading.current_thread())
        self.entered.set()
        if threading.current_thread() is not threading.main_thread():
            assert self.release.wait(30)
        self.removed.append(kw)


class Client:
    def __init__(self, container: Container) -> None:
        self.container = container
        self.containers = self

    def create(self, image, **kw):
        return self.container


def pending() -> int:
    """How many clean-ups handed to ``cleanup.later`` are still running."""
    return sum(t.is_alive() for t in cleanup._PENDING)


@pytest.fixture(autouse=True)
def nothing_pending():
    cleanup.settle()
    yield
    cleanup.settle()


def test_an_ended_container_is_removed_after_the_run_returns_and_settle_waits_for_it():
    c = Container()
    out: list[bytes] = []
    ran = run_container(Client(c), "img", {}, [b"tar"], 60, out.append)
    assert ran.exit_code == 0 and ran.stderr_tail == "err\n" and out == [b"line\n"]
    assert c.removed == [] and pending() == 1  # the removal waits for the test
    assert c.entered.wait(30)
    (thread,) = c.removed_in
    assert thread is not threading.main_thread() and not thread.daemon  # the exit waits for it
    c.release.set()
    cleanup.settle()
    assert c.removed == [{"force": True, "v": True}] and pending() == 0


def test_a_container_whose_run_failed_is_removed_before_the_error_leaves():
    c = Container(fail_start=True)
    with pytest.raises(docker.errors.APIError):
        run_container(Client(c), "img", {}, [b"tar"], 60, lambda _b: None)
    assert c.removed == [{"force": True, "v": True}]
    assert c.removed_in == [threading.main_thread()] and pending() == 0


def test_settle_runs_every_pending_clean_up_to_its_end():
    done: list[int] = []
    gate = threading.Event()
    for i in range(3):
        cleanup.later(lambda n=i: (gate.wait(30), done.append(n)))
    assert pending() == 3
    gate.set()
    cleanup.settle()
    assert sorted(done) == [0, 1, 2] and pending() == 0
