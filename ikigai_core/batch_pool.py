"""``ikigai batch --workers N``: N local worker processes, each running one task at a time.

Each worker is a spawned process serving tasks over a pipe. The coordinator watches both
the pipe and the process: a worker that exits while it holds a task (killed, out of
memory) is reported as dead with how it died, and a new worker takes its place.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Mapping
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any

from ikigai_core.batch import Finished
from ikigai_core.batch_tasks import Task

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

STOP_GRACE = 5.0
"""Seconds a worker has to stop after SIGTERM (its tools' process groups are killed as it
unwinds) before it is killed."""


def serve(conn: Connection, options: Mapping[str, Any]) -> None:
    """A worker's life: run each task the pipe brings, send back its result; stop at
    ``None`` or when the pipe closes. Ctrl-C is the coordinator's to handle; SIGTERM
    unwinds, so running tools are killed, and a coordinator that ends, however it ends
    (SIGKILL too), sends it; a worker killed outright has its tools killed by its
    :mod:`~ikigai_core.orphan_guard` watcher."""
    from ikigai_core import orphan_guard
    from ikigai_core.batch_worker import run_task
    from ikigai_core.cli import _terminate

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _terminate)
    orphan_guard.enable()  # a worker killed outright leaves no tool running either
    coordinator = multiprocessing.parent_process()
    if coordinator is not None:
        threading.Thread(target=_end_with, args=(coordinator.sentinel,), daemon=True,
                         name="ikigai-coordinator-watch").start()
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        conn.send(run_task(task, options))


def _end_with(coordinator: int) -> None:
    """Wait until the coordinator's process has ended, then stop this worker as SIGTERM
    does: a task mid-tool would otherwise run on until it sends its result."""
    wait([coordinator])
    os.kill(os.getpid(), signal.SIGTERM)


class Worker:
    """One worker process and the coordinator's end of its pipe."""

    def __init__(self, context: Any, options: Mapping[str, Any]) -> None:
        self.conn, theirs = multiprocessing.Pipe()
        self.process: BaseProcess = context.Process(target=serve, args=(theirs, options),
                                                    daemon=True)
        self.process.start()
        theirs.close()
        self.task: Task | None = None


def death(process: BaseProcess) -> str:
    """How a worker process ended, in words."""
    code = process.exitcode
    if code is not None and code < 0:
        return f"worker process {process.pid} was killed by signal {-code}"
    return f"worker process {process.pid} exited with code {code}"


class LocalPool:
    """``workers`` processes on this machine (see :class:`~ikigai_core.batch.Workers`).

    :param workers: how many.
    :param options: what every task runs with (:func:`~ikigai_core.batch_worker.run_task`).
    """

    def __init__(self, workers: int, options: Mapping[str, Any]) -> None:
        self.context = multiprocessing.get_context("spawn")  # no threads' locks inherited
        self.options = options
        self.slots = workers
        self.workers = [Worker(self.context, options) for _ in range(workers)]

    def submit(self, task: Task) -> None:
        """Hand ``task`` to an idle worker."""
        worker = next(w for w in self.workers if w.task is None)
        worker.task = task
        try:
            worker.conn.send(task.to_json())
        except OSError:
            pass  # it died idle: collect() finds it dead holding the task

    def collect(self, timeout: float) -> list[Finished]:
        """Results that came back, and tasks whose worker died (it is replaced)."""
        busy = [w for w in self.workers if w.task is not None]
        wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout)
        done: list[Finished] = []
        for worker in busy:
            task, worker.task = worker.task, None
            assert task is not None
            try:
                if worker.conn.poll():
                    done.append(Finished(task, worker.conn.recv()))
                    continue
            except (EOFError, OSError):
                pass  # the pipe broke with the process: the sentinel says how it ended
            if worker.process.is_alive():
                worker.task = task  # still at work
            else:
                worker.process.join()
                done.append(Finished(task, death=death(worker.process)))
                self._replace(worker)
        return done

    def _replace(self, worker: Worker) -> None:
        worker.conn.close()
        self.workers[self.workers.index(worker)] = Worker(self.context, self.options)

    def close(self) -> None:
        """Stop the workers: idle ones are told to, busy ones terminated; all are waited
        for (killed past :data:`STOP_GRACE`)."""
        for worker in self.workers:
            try:
                if worker.task is None:
                    worker.conn.send(None)
                else:
                    worker.process.terminate()
            except OSError:
                pass  # it is gone already
        for worker in self.workers:
            worker.process.join(STOP_GRACE)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.conn.close()
