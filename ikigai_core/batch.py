"""``ikigai batch``: many tasks, each a session, on workers; one coordinator writes results.

The coordinator (this module) hands tasks to a :class:`Workers` backend — a local process
pool (:mod:`ikigai_core.batch_pool`) or a Ray cluster (:mod:`ikigai_core.batch_ray`) — and
appends each result to the :class:`~ikigai_core.batch_results.ResultsFile` as it comes
back. A task whose worker died (killed, out of memory, its machine gone) is started once
more on another worker; a second death fails it. Either way its line says how many times
it was started (``attempts``) and how each worker died (``worker_deaths``). Every task
has one line, ever: a rerun skips the ids the file holds (docs/batch.md).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ikigai_core.batch_tasks import Problems, Task
from ikigai_core.errors import IkigaiError
from ikigai_core.record import Record

if TYPE_CHECKING:
    from pathlib import Path

    from ikigai_core.app import App
    from ikigai_core.batch_results import ResultsFile

MAX_ATTEMPTS = 2
"""A task is started at most this often: once, and once more if its worker died."""


class Finished(Record):
    """A task a worker is done with: its result, or how the worker died running it.

    :param task: the task.
    :param result: its result line (``None``: the worker died).
    :param death: how the worker died (one line), when it did.
    """

    task: Task
    result: dict[str, Any] | None = None
    death: str = ""


class Workers(Protocol):
    """Where tasks run: a local process pool, a Ray cluster."""

    slots: int
    """How many tasks it runs at once (the coordinator hands it no more)."""

    def submit(self, task: Task) -> None:
        """Start ``task`` on a free worker."""

    def collect(self, timeout: float) -> list[Finished]:
        """The tasks finished (or whose worker died) since the last call, waiting up to
        ``timeout`` seconds for one."""

    def close(self) -> None:
        """Stop every worker (running tasks are abandoned) and wait for them."""


class BatchEvents(Protocol):
    """What the coordinator tells its front end (the progress bar)."""

    def started(self, task: Task) -> None:
        """``task`` was handed to a worker."""

    def finished(self, result: Mapping[str, Any]) -> None:
        """``result`` was written to the results file."""


def check_tasks(app: App, tasks: Sequence[Task], source: Path) -> None:
    """Before anything runs: every provider the tasks name can be used here (its plugin,
    its key), every agent they name is defined; :class:`Problems` listing each problem."""
    from ikigai_core.session import ready_provider

    problems: list[str] = []
    providers: dict[str | None, str | None] = {}
    for task in tasks:
        if task.provider not in providers:
            try:
                ready_provider(app, task.provider)
                providers[task.provider] = None
            except IkigaiError as exc:
                providers[task.provider] = str(exc)
        if providers[task.provider] is not None:
            problems.append(f"{source}:{task.line}: {providers[task.provider]}")
        if task.agent is not None and task.agent not in app.agents:
            problems.append(f"{source}:{task.line}: {app.agents.why_not(task.agent)}")
    if problems:
        raise Problems(problems, "nothing was run; fix the tasks file")


def forwarded_environ(app: App) -> dict[str, str]:
    """What a worker elsewhere needs from this environment: the ``IKIGAI_*`` settings and
    every installed provider's key and base-URL variables (a key stored with ``ikigai
    keys`` included, once :func:`check_tasks` has read it)."""
    from ikigai_core.providers import collect_providers

    names = {name for provider in collect_providers(app.pm, app.notices).values()
             for name in (*provider.api_key_env, provider.base_url_env)}
    return {name: value for name, value in app.environ.items()
            if name.startswith("IKIGAI_") or name in names}


def run_batch(tasks: Sequence[Task], results: ResultsFile, workers: Workers,
              events: BatchEvents, *, poll: float = 0.5) -> None:
    """Run every task without a result in ``results`` on ``workers``, appending each
    result as it comes; a task whose worker died is started once more."""
    queue = deque(task for task in tasks if task.id not in results.finished)
    deaths: dict[str, list[str]] = {}
    running = 0
    while queue or running:
        while queue and running < workers.slots:
            task = queue.popleft()
            workers.submit(task)
            running += 1
            events.started(task)
        for done in workers.collect(poll):
            running -= 1
            lost = deaths.setdefault(done.task.id, [])
            if done.result is None:
                lost.append(done.death)
                if len(lost) < MAX_ATTEMPTS:
                    queue.appendleft(done.task)  # first in line, so a free worker takes it
                    continue
            result = dict(done.result) if done.result is not None else died(done.task, lost)
            result["attempts"] = len(lost) + (done.result is not None)
            if lost:
                result["worker_deaths"] = lost
            results.append(result)
            events.finished(result)


def died(task: Task, deaths: Sequence[str]) -> dict[str, Any]:
    """The result of a task whose every worker died."""
    return {"id": task.id, "status": "failed", "text": None,
            "error": f"its worker died {len(deaths)} times; last: {deaths[-1]}",
            "provider": task.provider, "model": task.model, "usage": None, "cost": None,
            "session": None, "tool_calls": [], "notices": []}
