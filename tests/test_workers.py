"""Tool calls run on reused threads (issue 25: starting a thread per call stalled the
parent of 16 sub-agents), never waiting for one, and none is kept idle for long."""

from __future__ import annotations

import threading
import time

import pytest

from ikigai_core.workers import Workers


def _names(workers: Workers) -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == workers.name}


def _ended(workers: Workers) -> None:
    """Wait until every idle worker has ended (each test leaves no thread behind)."""
    deadline = time.monotonic() + 10
    while _names(workers):
        assert time.monotonic() < deadline, "an idle worker never ended"
        time.sleep(0.05)


def test_a_finished_worker_takes_the_next_call() -> None:
    workers = Workers(idle=0.5, name="test-reuse")
    first = workers.submit(threading.get_ident).result(5)
    assert workers.submit(threading.get_ident).result(5) == first
    assert len(_names(workers)) == 1
    _ended(workers)


def test_every_call_runs_at_once_however_many_wait_on_each_other() -> None:
    workers = Workers(idle=0.2, name="test-many")
    meet = threading.Barrier(40, timeout=10)  # each call waits for all the others
    futures = [workers.submit(meet.wait) for _ in range(40)]
    assert sorted(f.result(15) for f in futures) == list(range(40))
    _ended(workers)


def test_an_idle_worker_ends_and_a_failure_reaches_the_caller() -> None:
    workers = Workers(idle=0.1, name="test-idle")

    def fail() -> None:
        raise ValueError("no such file")

    with pytest.raises(ValueError, match="no such file"):
        workers.submit(fail).result(5)
    _ended(workers)
    assert workers.submit(lambda: "again").result(5) == "again"
    _ended(workers)
