"""The agent loop: ask the model, run the tools it calls, send the results back, repeat.

UI-agnostic: ``ikigai ask`` and ``ikigai chat`` pass callbacks that print. Every tool
call of one model turn runs in its own worker thread through the executor; the results
go back in call order (issue 4, "Core: conversation, request building, loop").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ikigai_core.attachments import within_limit
from ikigai_core.conversation import (
    AssistantMessage,
    Conversation,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    UserMessage,
)
from ikigai_core.errors import IkigaiError
from ikigai_core.process import terminate_until
from ikigai_core.skills import LOAD_SKILL
from ikigai_core.toolset import Toolset
from ikigai_core.transport import send_turn

if TYPE_CHECKING:
    from ikigai_core.app import App
    from ikigai_core.attachments import Attachment
    from ikigai_core.budget import Meter
    from ikigai_core.conversation import Message
    from ikigai_core.execution import CallResult, ToolExecutor
    from ikigai_core.providers import Provider
    from ikigai_core.tools import Tool

CANCEL_POLL = 0.05
"""Seconds between looks at whether a turn whose tools run was cancelled."""


class TurnLimitReached(IkigaiError):
    """The model still wanted to call tools when the turn limit was reached."""


class Cancelled(IkigaiError):
    """The prompt was cancelled (:meth:`ikigai_core.session.Session.cancel`)."""


def build_request(
    provider: Provider,
    conversation: Conversation,
    registry: Mapping[str, Tool] | None,
    *,
    model: str,
    stream: bool,
    toolset: Toolset | None = None,
    reasoning: str | None = None,
) -> dict[str, Any]:
    """The body ``provider`` would POST next: the conversation and the tools ``toolset``
    selects from the registry (default: every tool but the skills' own), asking for
    ``reasoning`` when given.

    No registry (discovery not run or failed) advertises no tools.
    """
    tools = (toolset or Toolset()).tools(registry or {})
    body = provider.request_body(conversation, tools, model=model, stream=stream)
    return body if reasoning is None else provider.with_reasoning(body, reasoning, model=model)


@dataclass
class Agent:
    """One model with the registry's tools, and where to report what happens.

    :param app: runs the tools (executor, envelope hook, settings, environment).
    :param provider: the provider plugin speaking to the model.
    :param model: the model name sent to the provider.
    :param registry: the tools to run; ``chat`` swaps it on ``/refresh``.
    :param toolset: which of them to advertise; a successful ``load_skill`` call loads
        the skill into it, so its tools go out from the next turn.
    :param stream: stream the model's text (``on_text`` gets it piece by piece).
    :param max_turns: model requests one :meth:`run` may make.
    :param on_request: called before each request to the model (a front end starts a spinner).
    :param on_text: receives the model's text as it arrives (whole per turn without ``stream``).
    :param on_thinking: receives the model's thinking as it arrives, as ``on_text``.
    :param reasoning: how hard the model thinks (``low``, ``medium``, ``high``; ``None``:
        its default).
    :param on_tool_start: called in call order before a turn's tools start.
    :param on_tool_end: called as each tool finishes, with its envelope.
    :param executor: runs the tool calls (default: the app's); a session's asks its asker.
    :param cancelled: once set, :meth:`run` stops at the next piece of text, before the
        next request, or while tools run (killing them), raising :class:`Cancelled` (or
        what :meth:`stop` was given).
    :param meter: counts each answer against a budget, and is checked before each
        request and before an answer's tools run (``None``: no budget).
    """

    app: App
    provider: Provider
    model: str
    registry: Mapping[str, Tool] = field(default_factory=dict)
    toolset: Toolset = field(default_factory=Toolset)
    stream: bool = True
    max_turns: int = 25
    on_request: Callable[[], None] = lambda: None
    on_text: Callable[[str], None] = lambda text: None
    on_thinking: Callable[[str], None] = lambda text: None
    reasoning: str | None = None
    on_tool_start: Callable[[ToolCall], None] = lambda call: None
    on_tool_end: Callable[[ToolCall, Mapping[str, Any]], None] = lambda call, envelope: None
    executor: ToolExecutor | None = None
    cancelled: threading.Event = field(default_factory=threading.Event, repr=False)
    meter: Meter | None = None
    _tools_changed: Any = field(default=None, init=False, repr=False)
    _stopped_by: IkigaiError | None = field(default=None, init=False, repr=False)

    def stop(self, reason: IkigaiError) -> None:
        """Stop the run in progress as :attr:`cancelled` does, from any thread, raising
        ``reason`` (a budget's limit reached while tools run)."""
        self._stopped_by = reason
        self.cancelled.set()

    def rearm(self) -> None:
        """Clear a cancellation or :meth:`stop` before a new run."""
        self._stopped_by = None
        self.cancelled.clear()

    def run(self, conversation: Conversation, prompt: str,
            images: Sequence[Attachment] = ()) -> AssistantMessage:
        """Add ``prompt`` (with ``images``) and loop until the model answers without
        calling tools.

        Returns the model's last turn. On any exception (Ctrl-C, a provider error, the
        turn limit) ``conversation`` is put back as it was, so the next prompt starts
        from a conversation the provider accepts, then the exception propagates. A
        budget's limit (:class:`~ikigai_core.budget.BudgetExceeded`) keeps what the model
        answered (it was paid for), each call it asked for then answered as not run.
        """
        from ikigai_core.budget import BudgetExceeded

        mark = len(conversation.messages)
        conversation.add(UserMessage(prompt, tuple(images)))
        try:
            return self._loop(conversation)
        except BudgetExceeded as exc:
            if not any(isinstance(m, AssistantMessage) for m in conversation.messages[mark:]):
                del conversation.messages[mark:]
            self._close_calls(conversation, str(exc))
            raise
        except BaseException:
            del conversation.messages[mark:]
            raise

    def _close_calls(self, conversation: Conversation, why: str) -> None:
        """Answer the calls of a last turn whose tools did not run, with ``why``."""
        from ikigai_core.outcome import BUDGET_EXCEEDED

        last = conversation.messages[-1] if conversation.messages else None
        if isinstance(last, AssistantMessage) and last.tool_calls:
            executor = self.executor or self.app.executor
            conversation.add(ToolResultsMessage(tuple(
                ToolResult(call, executor.unrun(call.name, f"not run: {why}", BUDGET_EXCEEDED))
                for call in last.tool_calls)))

    def _loop(self, conversation: Conversation) -> AssistantMessage:
        turns = 0
        while True:
            self._follow_tool_changes()
            tools = self.toolset.tools(self.registry)
            self._check_cancelled()
            if self.meter is not None:
                self.meter.check()
            self.on_request()
            reply = send_turn(
                self.provider, conversation, tools, model=self.model, stream=self.stream,
                environ=self.app.environ, on_text=self._text if self.stream else None,
                reasoning=self.reasoning, on_thinking=self.on_thinking,
            )
            turns += 1
            if not self.stream and reply.text:
                self.on_text(reply.text)
            conversation.add(reply)
            if self.meter is not None:
                self.meter.answered(reply.usage)
            if not reply.tool_calls:
                return reply
            if self.meter is not None:
                self.meter.check()
            if turns == self.max_turns:  # its calls are not run: no model would see the results
                raise TurnLimitReached(
                    f"stopped after {turns} turn{'s' if turns > 1 else ''}: the model still "
                    "wants to call tools; raise --max-turns (or IKIGAI_MAX_TURNS)"
                )
            conversation.add(ToolResultsMessage(
                self.run_calls(reply.tool_calls, self._offered(tools), conversation)))

    def _check_cancelled(self) -> None:
        if self.cancelled.is_set():
            raise self._stopped_by or Cancelled("the prompt was cancelled")

    def _text(self, piece: str) -> None:
        self._check_cancelled()
        self.on_text(piece)

    def _offered(self, tools: Sequence[Tool]) -> dict[str, Tool]:
        """The tools a request carrying ``tools`` advertised: those the provider could take
        (about a millisecond a turn for the eight built-in and example tools)."""
        taken = {fit.tool for fit in self.provider.fit_tools(tools) if fit.declaration is not None}
        return {tool.name: tool for tool in tools if tool.name in taken}

    def _follow_tool_changes(self) -> None:
        """Discover again when a plugin says its tools changed (``ikigai_tools_changed``)."""
        if self._tools_changed is None:
            from ikigai_core.hookcall import Notifier

            self._tools_changed = Notifier(self.app.pm, "ikigai_tools_changed", self.app.notices)
        if any(self._tools_changed()):
            self.registry = self.app.registry()

    def run_calls(
        self, calls: Sequence[ToolCall], offered: Mapping[str, Tool],
        conversation: Conversation | None = None,
    ) -> tuple[ToolResult, ...]:
        """Run ``calls`` concurrently, one worker thread each; their results in call order.

        Each call's ``ikigai_before_tool_call`` plugins see ``conversation`` (the one the
        calls come from) as it stands now: a tuple of its messages, ending with the turn
        that made the calls (issue 24: the web plugin's URL rule and ``web.max_uses``).

        Only the tools in ``offered`` (those the request advertised) can run: a call of
        any other is ``TOOL_NOT_FOUND`` and starts nothing, so ``--tools``, ``--no-tools``,
        the config's toolset, ``/toolset`` and unloaded skills hold whatever the model
        asks (issue 21 item 11).

        On Ctrl-C (or any exception in this thread) every running tool's process group
        is killed and the workers are waited for before the exception propagates.
        """
        for call in calls:
            self.on_tool_start(call)
        with ThreadPoolExecutor(len(calls), thread_name_prefix="ikigai-tool") as pool:
            seen = None if conversation is None else tuple(conversation.messages)
            futures = {pool.submit(self._timed, call, offered, seen): call for call in calls}
            try:
                self._report_ends(futures)
            except BaseException:
                _cancel(futures)
                raise
        return tuple(future.result() for future in futures)

    def _report_ends(self, futures: Mapping[Future[ToolResult], ToolCall]) -> None:
        """Tell ``on_tool_end`` of each call as it ends; raise :class:`Cancelled` once
        :attr:`cancelled` is set."""
        running = set(futures)
        while running:
            ended, running = wait(running, timeout=CANCEL_POLL, return_when=FIRST_COMPLETED)
            for future in [f for f in futures if f in ended]:  # in call order
                self.on_tool_end(futures[future], future.result().envelope)
            self._check_cancelled()

    def _timed(self, call: ToolCall, offered: Mapping[str, Tool],
               conversation: tuple[Message, ...] | None) -> ToolResult:
        started = time.monotonic()
        done = self.call(call, offered, conversation)
        return ToolResult(call, done.envelope, time.monotonic() - started,
                          within_limit(done.outcome.attachments))

    def call(self, call: ToolCall, offered: Mapping[str, Tool],
             conversation: tuple[Message, ...] | None = None) -> CallResult:
        """Run one tool call of a tool in ``offered`` through the executor and return
        what happened; the plugins see ``conversation``'s messages (``None``: none).

        Arguments the provider could not parse get ``INVALID_PARAMS`` without running
        anything; the provider undoes its schema changes (``prepare_arguments``) first.
        """
        unparsed = None
        if call.arguments is None:
            unparsed = call.arguments_error or "not a JSON object"
        done = (self.executor or self.app.executor).call(
            offered, call.name, call.arguments, call_id=call.id, unparsed=unparsed,
            prepare=self.provider.prepare_arguments, conversation=conversation,
        )
        result = done.outcome.result
        if (call.name == LOAD_SKILL and result is not None and "error" not in result
                and result.get("skill") in self.toolset.skills):
            self.toolset.load(result["skill"])
        return done


def _cancel(futures: Mapping[Future[Any], ToolCall]) -> None:
    """Kill running tools, and cancel runner calls (an MCP call), until every worker has
    returned (a tool may start late)."""
    from ikigai_core.execution import cancel_runner_calls

    for future in futures:
        future.cancel()

    def finished(poll: float) -> bool:
        cancel_runner_calls()
        return not wait(futures, timeout=poll).not_done

    terminate_until(finished)
