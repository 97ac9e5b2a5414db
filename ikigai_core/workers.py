"""The threads tool calls run on, reused: one per call under way, none kept idle for long.

Starting a thread holds the interpreter until the OS has made it, milliseconds on a busy
machine: 16 sub-agents each starting a thread per tool call stalled their parent's event
handling (issue 25). A worker that finishes a call waits :data:`IDLE` seconds for the
next one, then ends. There is no cap: a call never waits for a worker (a call waiting for
other agents, whose calls need workers too, cannot deadlock).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")

IDLE = 0.5
"""Seconds a worker waits for its next call before it ends."""

_Job = tuple["Future[Any]", Callable[..., Any], tuple[Any, ...]]


class Workers:
    """Runs each submitted call at once on an idle worker thread, or a new one.

    :param idle: seconds a worker waits for its next call before it ends.
    :param name: the workers' thread name.
    """

    def __init__(self, idle: float = IDLE, name: str = "ikigai-tool") -> None:
        self.idle = idle
        self.name = name
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._waiting = 0  # idle workers no submitted call has claimed yet

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Run ``fn(*args)`` now on a worker; its future."""
        future: Future[T] = Future()
        job: _Job = (future, fn, args)
        with self._lock:
            if self._waiting:  # an idle worker takes it
                self._waiting -= 1
                self._jobs.put(job)
                return future
        threading.Thread(target=self._work, args=(job,), name=self.name, daemon=True).start()
        return future

    def _work(self, job: _Job) -> None:
        while True:
            _run(job)
            with self._lock:
                self._waiting += 1
            while True:
                try:
                    job = self._jobs.get(timeout=self.idle)
                    break
                except queue.Empty:
                    with self._lock:
                        if self._waiting:  # no call is on its way to this worker: end
                            self._waiting -= 1
                            return
                    # every idle worker is claimed: a call is on its way, wait for it


def _run(job: _Job) -> None:
    future, fn, args = job
    if not future.set_running_or_notify_cancel():
        return
    try:
        result = fn(*args)
    except BaseException as exc:  # noqa: BLE001 - the caller gets it from the future
        future.set_exception(exc)
    else:
        future.set_result(result)


TOOL_WORKERS = Workers()
"""The workers of every agent's tool calls in this process."""
