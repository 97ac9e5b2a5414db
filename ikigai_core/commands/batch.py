"""``ikigai batch TASKS.jsonl``: the tasks checked, run on workers, results appended, and
a progress bar on a terminal (docs/batch.md)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ikigai_core.app import App
from ikigai_core.batch_tasks import Problems, Task
from ikigai_core.commands.approving import approval_options
from ikigai_core.commands.output import printable, warn
from ikigai_core.commands.tools import pass_app

if TYPE_CHECKING:
    from ikigai_core.batch import Workers
    from ikigai_core.batch_results import ResultsFile


class Tally:
    """What the batch did so far; on a terminal, drawn as a rich progress bar on stderr.

    :param total: the tasks this run starts.
    :param bar: draw the bar (a terminal).
    """

    def __init__(self, total: int, *, bar: bool) -> None:
        self.done = self.failed = self.running = self.tokens = 0
        self.progress: Any = None
        if bar:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.progress = Progress(BarColumn(), MofNCompleteColumn(),
                                     TextColumn("{task.description}"), TimeElapsedColumn(),
                                     console=Console(stderr=True))
            self.bar = self.progress.add_task(self.line(), total=total)

    def line(self) -> str:
        """``done 3  failed 1  running 4  tokens 1,234``."""
        return (f"done {self.done}  failed {self.failed}  running {self.running}  "
                f"tokens {self.tokens:,}")

    def started(self, task: Task) -> None:
        """A worker took ``task``."""
        self.running += 1
        self._draw()

    def finished(self, result: Mapping[str, Any]) -> None:
        """``result`` is in the results file; a failure is one line."""
        self.running -= 1
        usage = result.get("usage") or {}
        self.tokens += usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
        if result["status"] == "done":
            self.done += 1
        else:
            self.failed += 1
            self._say(f"task {result['id']} failed: {result['error']}")
        self._draw(advance=1)

    def _say(self, message: str) -> None:
        if self.progress is None:
            warn(message)
        else:
            self.progress.console.print(f"ikigai: {printable(message, keep_newlines=False)}",
                                        markup=False, highlight=False)

    def _draw(self, advance: int = 0) -> None:
        if self.progress is not None:
            self.progress.update(self.bar, description=self.line(), advance=advance)

    @contextmanager
    def shown(self) -> Iterator[None]:
        """Draw the bar while the block runs."""
        if self.progress is None:
            yield
            return
        with self.progress:
            yield


@click.command("batch")
@click.argument("tasks_file", metavar="TASKS.jsonl",
                type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Append results here (default: TASKS.results.jsonl beside the tasks).")
@click.option("--workers", type=click.IntRange(min=1), metavar="N",
              help="Run N tasks at once in local processes (default: the CPUs, "
                   f"{os.cpu_count() or 1}).")
@click.option("--ray", "ray_address", metavar="ADDRESS",
              help="Run each task as a Ray task on the cluster at ADDRESS (or auto).")
@click.option("--work", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Keep each task's work folder as DIR/ID (default: a temporary one, "
                   "removed after the task).")
@approval_options[1]
@pass_app
def batch(app: App, tasks_file: Path, out: Path | None, workers: int | None,
          ray_address: str | None, work: Path | None, allow: tuple[str, ...]) -> None:
    """Run every task of TASKS.jsonl as a session; append each result to a JSONL file.

    Each line of TASKS.jsonl is a task: {"id": ..., "prompt": ...} and optionally cwd,
    provider, model, tools, budget, agent and allow. A rerun skips the tasks the results
    file holds. Nobody is asked to approve a tool call: only --allow, the task's allow
    rules and the permission rules let one run.
    """
    from ikigai_core.batch import check_tasks, forwarded_environ
    from ikigai_core.batch_results import ResultsFile, default_results
    from ikigai_core.batch_tasks import read_tasks
    from ikigai_core.commands.approving import grants
    from ikigai_core.errors import UsageError

    if workers is not None and ray_address is not None:
        raise UsageError("--workers and --ray exclude each other: the cluster decides how "
                         "many tasks run at once")
    grants(False, allow)  # a malformed --allow fails now
    try:
        tasks = read_tasks(tasks_file)
        check_tasks(app, tasks, tasks_file)
        results = ResultsFile(out or default_results(tasks_file))
    except Problems as exc:
        for line in exc.lines:
            warn(line)
        sys.exit(exc.exit_code)
    options = {"allow": list(allow), "environ": forwarded_environ(app),
               "work": None if work is None else str(work.resolve())}
    try:
        _run(tasks, results, options, workers, ray_address)
    finally:
        results.close()


def _run(tasks: list[Task], results: ResultsFile, options: dict[str, Any],
         workers: int | None, ray_address: str | None) -> None:
    """Run the tasks without a result, the bar drawn on a terminal; then the summary line,
    exit 1 when a task is not done."""
    from ikigai_core.batch import run_batch

    if results.dropped:
        warn(f"{results.path}: dropped its last line, cut short by a batch that stopped "
             "while writing it; that task runs again")
    todo = [task for task in tasks if task.id not in results.finished]
    tally = Tally(len(todo), bar=sys.stderr.isatty())
    pool = _workers(options, workers, ray_address, len(todo)) if todo else None
    try:
        with tally.shown():
            if pool is not None:
                run_batch(todo, results, pool, tally)
    finally:
        if pool is not None:
            pool.close()
    skipped = len(tasks) - len(todo)
    click.echo(f"{tally.done} done, {tally.failed} failed"
               + (f", {skipped} skipped (finished before)" if skipped else "")
               + f"; results in {results.path}")
    if tally.failed:
        sys.exit(1)


def _workers(options: dict[str, Any], workers: int | None, ray_address: str | None,
             todo: int) -> Workers:
    """The Ray cluster at ``ray_address``, else a pool of ``workers`` (default: the CPUs)
    local processes, never more than there are tasks."""
    if ray_address is not None:
        from ikigai_core.batch_ray import RayCluster

        return RayCluster(ray_address, options)
    from ikigai_core.batch_pool import LocalPool

    return LocalPool(min(todo, workers or os.cpu_count() or 1), options)
