"""The tool boundary of a session: the one place its tool calls start.

A call runs only if its tool is among those ``offered`` (the tools the request the model
answered carried, or those a session serves): any other is ``TOOL_NOT_FOUND`` and starts
nothing, so ``--tools``, ``--no-tools``, the config's toolset, ``/toolset`` and unloaded
skills hold whatever the model (or an MCP client) asks (issue 21 item 11). Every call goes
through an executor asking the session's asker (``None``: nobody, so a call that would ask
is denied). A :class:`~ikigai_core.session.Session` owns one :class:`ToolCalls`; its agent
loop and ``ikigai mcp serve`` both run their calls through it (issue 23).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import TYPE_CHECKING, Any

from ikigai_core.attachments import within_limit
from ikigai_core.cancel import Cancel
from ikigai_core.cancel import Cancelled as Cancelled  # importable from here too
from ikigai_core.conversation import ToolCall, ToolResult
from ikigai_core.errors import IkigaiError
from ikigai_core.grants import NO_GRANTS, Grants
from ikigai_core.process import KILL_SCOPE, terminate_until
from ikigai_core.skills import LOAD_SKILL

if TYPE_CHECKING:
    from ikigai_core.app import App
    from ikigai_core.conversation import Message
    from ikigai_core.execution import CallResult, ToolExecutor
    from ikigai_core.providers import Provider
    from ikigai_core.tools import Tool
    from ikigai_core.toolset import Toolset

CANCEL_POLL = 0.05
"""Seconds between looks at whether a turn whose tools run was cancelled."""

Prepare = Callable[["Tool", Mapping[str, Any]], Mapping[str, Any]]
"""Undoes a provider's schema changes in a call's arguments (OpenAI's nulls)."""


class ToolCalls:
    """Runs a session's tool calls, each only if its tool was offered.

    :param app: the invocation whose executor (hooks, process, envelope) runs the calls.
    :param toolset: the session's toolset; a successful ``load_skill`` call loads the skill
        into it, so its tools are offered from the next request on.
    :param on_start: called in call order before a turn's tools start.
    :param on_end: called as each tool finishes, with its envelope.
    :param cancelled: once set, :meth:`run` kills the running tools and raises
        :class:`Cancelled` (or what :meth:`stop` was given); a request to the model sent
        with it ends at once too (:class:`~ikigai_core.cancel.Cancel`).
    :param grants: what the session approves without asking, as it is now: asked as each
        call starts (``ToolCallRequest.grants``); nothing by default.
    """

    def __init__(self, app: App, toolset: Toolset, *,
                 on_start: Callable[[ToolCall], None] = lambda call: None,
                 on_end: Callable[[ToolCall, Mapping[str, Any]], None] = lambda call, env: None,
                 cancelled: Cancel | None = None,
                 grants: Callable[[], Grants] = lambda: NO_GRANTS) -> None:
        self.app = app
        self.toolset = toolset
        self.on_start = on_start
        self.on_end = on_end
        self.cancelled = cancelled or Cancel()
        self.grants = grants
        self._stopped_by: IkigaiError | None = None
        self.executor: ToolExecutor = app.executor
        """Runs the calls: the app's (asking its ``ask_user``) until a session gives one
        asking its own asker (:meth:`~ikigai_core.app.App.executor_asking`)."""

    def offered(self, tools: Sequence[Tool], provider: Provider | None = None
                ) -> dict[str, Tool]:
        """The tools a request carrying ``tools`` offers, by name: those ``provider`` can
        take (about a millisecond for the eight built-in and example tools); all of them
        when no model is asked (``ikigai mcp serve``)."""
        if provider is not None:
            taken = {fit.tool for fit in provider.fit_tools(tools) if fit.declaration is not None}
            tools = [tool for tool in tools if tool.name in taken]
        return {tool.name: tool for tool in tools}

    def call(self, offered: Mapping[str, Tool], name: str, arguments: Any, *,
             call_id: str | None = None, unparsed: str | None = None,
             prepare: Prepare | None = None,
             conversation: tuple[Message, ...] | None = None) -> CallResult:
        """Run one call of tool ``name`` if it is in ``offered``, else ``TOOL_NOT_FOUND``
        (nothing starts); the arguments as for
        :meth:`~ikigai_core.execution.ToolExecutor.call`. Thread-safe."""
        done = self.executor.call(offered, name, arguments, call_id=call_id, unparsed=unparsed,
                                  prepare=prepare, conversation=conversation,
                                  grants=self.grants())
        result = done.outcome.result
        if (name == LOAD_SKILL and result is not None and "error" not in result
                and result.get("skill") in self.toolset.skills):
            self.toolset.load(result["skill"])
        return done

    def run(self, calls: Sequence[ToolCall], offered: Mapping[str, Tool],
            conversation: tuple[Message, ...] | None = None, *,
            prepare: Prepare | None = None) -> tuple[ToolResult, ...]:
        """Run a model turn's ``calls`` concurrently, one worker thread each
        (:mod:`ikigai_core.workers`: reused, never capped); their results
        in call order. The plugins see ``conversation`` (the turn's messages, ending with
        the turn that made the calls; issue 24). Arguments the provider could not parse get
        ``INVALID_PARAMS`` without running anything.

        On Ctrl-C (or any exception in this thread), or once :attr:`cancelled` is set,
        every running tool's process group is killed and the workers are waited for
        before the exception propagates.
        """
        from ikigai_core.workers import TOOL_WORKERS

        for call in calls:
            self.on_start(call)
        scope = object()  # what this run starts, and no other agent's calls, is killed
        futures = {TOOL_WORKERS.submit(self._timed, scope, call, offered, conversation,
                                       prepare): call for call in calls}
        try:
            self._report_ends(futures)
        except BaseException:
            _cancel(futures, scope)
            raise
        return tuple(future.result() for future in futures)

    def stop(self, reason: IkigaiError) -> None:
        """Stop the run in progress as :attr:`cancelled` does, from any thread, raising
        ``reason`` (a budget's limit reached while tools run)."""
        self._stopped_by = reason
        self.cancelled.set()

    def rearm(self) -> None:
        """Clear a cancellation or :meth:`stop` before a new run."""
        self._stopped_by = None
        self.cancelled.clear()

    def check_cancelled(self) -> None:
        """Raise :class:`Cancelled` (or what :meth:`stop` was given) once :attr:`cancelled`
        is set."""
        if self.cancelled.is_set():
            raise self._stopped_by or Cancelled("the prompt was cancelled")

    def _report_ends(self, futures: Mapping[Future[ToolResult], ToolCall]) -> None:
        running = set(futures)
        while running:
            ended, running = wait(running, timeout=CANCEL_POLL, return_when=FIRST_COMPLETED)
            for future in [f for f in futures if f in ended]:  # in call order
                self.on_end(futures[future], future.result().envelope)
            self.check_cancelled()

    def _timed(self, scope: object, call: ToolCall, offered: Mapping[str, Tool],
               conversation: tuple[Message, ...] | None, prepare: Prepare | None) -> ToolResult:
        started = time.monotonic()
        unparsed = None if call.arguments is not None else (
            call.arguments_error or "not a JSON object")
        token = KILL_SCOPE.set(scope)
        try:
            done = self.call(offered, call.name, call.arguments, call_id=call.id,
                             unparsed=unparsed, prepare=prepare, conversation=conversation)
        finally:
            KILL_SCOPE.reset(token)
        return ToolResult(call, done.envelope, time.monotonic() - started,
                          within_limit(done.outcome.attachments))


def _cancel(futures: Mapping[Future[Any], ToolCall], scope: object) -> None:
    """Kill the run's running tools, and cancel its runner calls (an MCP call), until
    every worker has returned (a tool may start late); ``scope``: the run's
    :data:`~ikigai_core.process.KILL_SCOPE`, other agents' calls go on."""
    from ikigai_core.execution import cancel_runner_calls

    for future in futures:
        future.cancel()

    def finished(poll: float) -> bool:
        cancel_runner_calls(scope)
        return not wait(futures, timeout=poll).not_done

    terminate_until(finished, scope=scope)
