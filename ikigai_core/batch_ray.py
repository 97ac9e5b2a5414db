"""``ikigai batch --ray ADDRESS``: each task a Ray task on an existing Ray cluster.

Ray (``pip install 'ikigai-core[ray]'``) is imported here only. A task takes one CPU of
the cluster and runs :func:`~ikigai_core.batch_worker.run_task` on whichever node Ray
places it, its tools on that node. Ray's own retries are off (``max_retries=0``): when a
worker or its node dies, the coordinator learns it here and decides (one more attempt,
recorded in the result), so that no task is run or reported behind its back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ikigai_core.batch import Finished
from ikigai_core.batch_tasks import Task
from ikigai_core.errors import UsageError

CONNECT_TIMEOUT = 5.0
"""Seconds the cluster's address has to accept a connection."""


def connect(address: str) -> Any:
    """The ``ray`` module, connected to the cluster at ``address`` (``auto``: the one this
    machine runs); a :class:`UsageError` when Ray is missing or the cluster cannot be
    reached."""
    import logging

    try:
        import ray
    except ImportError:
        raise UsageError("--ray needs Ray: pip install 'ikigai-core[ray]'") from None
    _reachable(address)
    try:
        ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR,
                 configure_logging=False, include_dashboard=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise UsageError(f"cannot connect to the Ray cluster at {address}: "
                         f"{_first_line(exc)}; start one with `ray start --head`, or pass "
                         "its address") from None
    _quiet_driver()
    return ray


def _quiet_driver() -> None:
    """Keep Ray's messages off stdout, which carries the batch's results line.

    Ray's driver prints the cluster's error messages ("(raylet) The node ... has been marked
    dead ...") on stdout from a thread of its own, whatever ``log_to_driver`` says, and has
    no setting for it (Ray 2.60); this flag, which Ray's own debugger (``ray.util.rpdb``)
    turns off, is the only switch. Nothing is lost: each death is in its task's result
    line (``worker_deaths``). Guarded by tests/test_batch_ray.py: if Ray renames the flag,
    its stdout check fails.
    """
    from ray._private import worker

    if hasattr(worker, "_worker_logs_enabled"):
        worker._worker_logs_enabled = False


def _reachable(address: str) -> None:
    """A ``HOST:PORT`` nobody answers on is refused at once (Ray itself would retry for
    ever, logging each try); ``auto`` and ``ray://`` addresses are left to Ray."""
    import socket

    host, colon, port = address.rpartition(":")
    if not colon or not port.isdigit() or "/" in address:
        return
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        raise UsageError(f"cannot connect to the Ray cluster at {address}: "
                         f"{exc.strerror or exc}; start one with `ray start --head`, or "
                         "pass its address") from None


class RayCluster:
    """The cluster as :class:`~ikigai_core.batch.Workers`: one task per CPU it has.

    :param address: the cluster's address (``auto``, ``HOST:PORT``, ``ray://...``).
    :param options: what every task runs with (:func:`~ikigai_core.batch_worker.run_task`).
    """

    def __init__(self, address: str, options: Mapping[str, Any]) -> None:
        from ikigai_core.batch_worker import run_task

        self.ray = connect(address)
        self.slots = max(1, int(self.ray.cluster_resources().get("CPU", 0)))
        self.remote = self.ray.remote(num_cpus=1, max_retries=0)(run_task)
        self.options = self.ray.put(dict(options))
        self.running: dict[Any, Task] = {}

    def submit(self, task: Task) -> None:
        """Queue ``task`` on the cluster."""
        self.running[self.remote.remote(task.to_json(), self.options)] = task

    def collect(self, timeout: float) -> list[Finished]:
        """Results that came back; a task whose worker or node died, with Ray's words."""
        ray = self.ray
        ready, _ = ray.wait(list(self.running), num_returns=1, timeout=timeout)
        if ready:
            ready, _ = ray.wait(list(self.running), num_returns=len(self.running), timeout=0)
        done = []
        for ref in ready:
            task = self.running.pop(ref)
            try:
                done.append(Finished(task, ray.get(ref)))
            except ray.exceptions.RayError as exc:
                done.append(Finished(task, death=_first_line(exc)))
        return done

    def close(self) -> None:
        """Cancel what still runs and leave the cluster (it keeps running)."""
        for ref in self.running:
            self.ray.cancel(ref, force=True)
        self.ray.shutdown()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")
