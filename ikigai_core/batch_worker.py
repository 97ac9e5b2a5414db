"""One batch task, run where a worker runs it: a local pool's process or a Ray task.

:func:`run_task` takes and returns plain data, so either carries it. The task runs as a
:class:`~ikigai_core.session.Session` in its own work folder (a copy of its ``cwd``, or
empty), its tools on this machine under this machine's sandbox setting; nobody can be asked
to approve a call, so only the batch's ``--allow`` and the task's ``allow`` rules (and the
user's permission rules) let one run: the rest are denied, and said so in the result.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ikigai_core.batch_tasks import Task
from ikigai_core.errors import IkigaiError, UsageError

if TYPE_CHECKING:
    from ikigai_core.app import App
    from ikigai_core.session import Session


def run_task(task: Mapping[str, Any], options: Mapping[str, Any]) -> dict[str, Any]:
    """Run ``task`` (:meth:`Task.to_json`) and return its result line. The task's own
    failures (a provider error, a budget reached, a tool guard) are its result's
    ``status`` and ``error``, never an exception.

    :param options: ``allow`` (the batch's ``--allow`` rules), ``environ`` (variables set
        over this process's environment), ``work`` (a folder keeping each task's work
        folder, or ``None``: a temporary one, removed after).
    """
    from ikigai_core.app import App

    chosen = Task.from_json(dict(task))
    started = time.monotonic()
    result: dict[str, Any] = {"id": chosen.id, "status": "failed", "text": None, "error": None,
                              "provider": chosen.provider, "model": chosen.model,
                              "usage": None, "cost": None, "session": None, "tool_calls": [],
                              "notices": []}
    try:
        with work_folder(chosen.id, chosen.cwd, options.get("work")) as folder:
            app = App(environ={**os.environ, **options.get("environ", {})}, cwd=folder)
            try:
                session = open_session(app, chosen)
                result.update(provider=session.provider.name, model=session.model)
                result.update(answer(session, chosen, options.get("allow", ())))
            except IkigaiError as exc:
                result["error"] = str(exc)
            except Exception as exc:  # a bug in a plugin fails its task, not the batch
                result["error"] = f"{type(exc).__name__}: {exc}"
            result["notices"] = [notice.message for notice in app.notices]
            if options.get("work") is not None:
                result["work"] = str(folder)
    except OSError as exc:
        result["error"] = f"cannot make the task's work folder: {exc}"
    result["seconds"] = round(time.monotonic() - started, 3)
    result["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    return result


def open_session(app: App, task: Task) -> Session:
    """The task's session: its provider, model, tools and budget, or its agent definition's
    (the task's own fields win, the budget limit by limit); recorded as started by
    ``batch``; not streamed (nobody watches)."""
    from ikigai_core.budget import Budget
    from ikigai_core.orchestration.limits import filled, parse_budget
    from ikigai_core.session import Session

    budget = parse_budget(task.budget)
    model, tools, system, max_turns = task.model, task.tools, None, None
    if task.agent is not None:
        if task.agent not in app.agents:
            raise UsageError(app.agents.why_not(task.agent))
        definition = app.agents[task.agent]
        budget = filled(budget, definition.budget)
        model, system, max_turns = model or definition.model, definition.prompt, \
            definition.max_turns
        tools = tools if tools is not None else definition.tools
    return Session.open(app, task.provider, model, system=system, stream=False,
                        tools=",".join(tools) if tools else None, no_tools=tools == (),
                        max_turns=max_turns, command="batch",
                        budget=filled(budget, Budget(cost=app.settings.max_cost)))


def answer(session: Session, task: Task, allow: Sequence[str]) -> dict[str, Any]:
    """Send the task's prompt under its grants; what the result says of the answer (and,
    when a budget stopped it, of what was answered before: then it is raised)."""
    from ikigai_core.budget import BudgetExceeded
    from ikigai_core.conversation import ToolResultsMessage
    from ikigai_core.grants import Grants
    from ikigai_core.permissions import allow_rule

    rules = (*(allow_rule(spec, "--allow") for spec in allow),
             *(allow_rule(spec, "allow") for spec in task.allow))
    spent: dict[str, Any] = {}
    session.grants = Grants(False, rules, yes_offered=False)
    try:
        reply = session.send(task.prompt)
    except BudgetExceeded as exc:
        spent = {"status": "over_budget", "error": str(exc), "limit": exc.limit, "text": None}
        reply = None
    usage = session.usage
    calls = [result for message in session.exchange
             if isinstance(message, ToolResultsMessage) for result in message.results]
    return {
        "status": "done", "text": None if reply is None else reply.text,
        "session": session.id if session.exchange else None,
        "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                  "cache_read_tokens": usage.cache_read_tokens,
                  "cache_write_tokens": usage.cache_write_tokens},
        "cost": session.meter.spent.cost,
        "tool_calls": [{"name": r.call.name, "ok": bool(r.envelope.get("tool_success")),
                        **({} if r.envelope.get("tool_success") else
                           {"error_code": r.envelope.get("error_code"),
                            "error": r.envelope.get("error")})} for r in calls],
        **spent,
    }


@contextmanager
def work_folder(task_id: str, source: Path | None, keep: str | None) -> Iterator[Path]:
    """The task's own folder: ``keep/ID`` (kept; made afresh) or a temporary one (removed
    after), holding a copy of ``source`` (symlinks copied as links, never followed)."""
    parent = Path(keep) if keep is not None else Path(tempfile.mkdtemp(prefix="ikigai-batch-"))
    folder = parent / task_id
    try:
        shutil.rmtree(folder, ignore_errors=True)  # a retried task starts from a fresh copy
        if source is not None:
            shutil.copytree(source, folder, symlinks=True)
        else:
            folder.mkdir(parents=True)
        yield folder
    finally:
        if keep is None:
            shutil.rmtree(parent, ignore_errors=True)
