"""The agent loop: ask the model, run the tools it calls, send the results back, repeat.

UI-agnostic: ``ikigai ask`` and ``ikigai chat`` pass callbacks that print. Every tool
call of one model turn runs in its own worker thread through the executor; the results
go back in call order (issue 4, "Core: conversation, request building, loop").
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor, as_completed, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

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
from ikigai_core.transport import send_turn

if TYPE_CHECKING:
    from ikigai_core.app import App
    from ikigai_core.providers import Provider
    from ikigai_core.tools import Tool

class TurnLimitReached(IkigaiError):
    """The model still wanted to call tools when the turn limit was reached."""


def build_request(
    provider: Provider,
    conversation: Conversation,
    registry: Mapping[str, Tool] | None,
    *,
    model: str,
    stream: bool,
) -> dict[str, Any]:
    """The body ``provider`` would POST next: the conversation and every registry tool.

    No registry (discovery not run or failed) advertises no tools.
    """
    return provider.request_body(conversation, _tools(registry), model=model, stream=stream)


def _tools(registry: Mapping[str, Tool] | None) -> list[Tool]:
    return list(registry.values()) if registry is not None else []


@dataclass
class Agent:
    """One model with the registry's tools, and where to report what happens.

    :param app: runs the tools (executor, envelope hook, settings, environment).
    :param provider: the provider plugin speaking to the model.
    :param model: the model name sent to the provider.
    :param registry: the tools to advertise and run; ``chat`` swaps it on ``/refresh``.
    :param stream: stream the model's text (``on_text`` gets it piece by piece).
    :param max_turns: model requests one :meth:`run` may make.
    :param on_text: receives the model's text as it arrives (whole per turn without ``stream``).
    :param on_tool_start: called in call order before a turn's tools start.
    :param on_tool_end: called as each tool finishes, with its envelope.
    """

    app: App
    provider: Provider
    model: str
    registry: Mapping[str, Tool] = field(default_factory=dict)
    stream: bool = True
    max_turns: int = 25
    on_text: Callable[[str], None] = lambda text: None
    on_tool_start: Callable[[ToolCall], None] = lambda call: None
    on_tool_end: Callable[[ToolCall, Mapping[str, Any]], None] = lambda call, envelope: None

    def run(self, conversation: Conversation, prompt: str) -> AssistantMessage:
        """Add ``prompt`` and loop until the model answers without calling tools.

        Returns the model's last turn. On any exception (Ctrl-C, a provider error, the
        turn limit) ``conversation`` is put back as it was, so the next prompt starts
        from a conversation the provider accepts, then the exception propagates.
        """
        mark = len(conversation.messages)
        conversation.add(UserMessage(prompt))
        try:
            return self._loop(conversation)
        except BaseException:
            del conversation.messages[mark:]
            raise

    def _loop(self, conversation: Conversation) -> AssistantMessage:
        tools = _tools(self.registry)
        turns = 0
        while True:
            reply = send_turn(
                self.provider, conversation, tools, model=self.model, stream=self.stream,
                environ=self.app.environ, on_text=self.on_text if self.stream else None,
            )
            turns += 1
            if not self.stream and reply.text:
                self.on_text(reply.text)
            conversation.add(reply)
            if not reply.tool_calls:
                return reply
            if turns == self.max_turns:  # its calls are not run: no model would see the results
                raise TurnLimitReached(
                    f"stopped after {turns} turn{'s' if turns > 1 else ''}: the model still "
                    "wants to call tools; raise --max-turns (or IKIGAI_MAX_TURNS)"
                )
            conversation.add(ToolResultsMessage(self.run_calls(reply.tool_calls)))

    def run_calls(self, calls: Sequence[ToolCall]) -> tuple[ToolResult, ...]:
        """Run ``calls`` concurrently, one worker thread each; their results in call order.

        On Ctrl-C (or any exception in this thread) every running tool's process group
        is killed and the workers are waited for before the exception propagates.
        """
        for call in calls:
            self.on_tool_start(call)
        with ThreadPoolExecutor(len(calls), thread_name_prefix="ikigai-tool") as pool:
            futures = {pool.submit(self.call, call): call for call in calls}
            try:
                for future in as_completed(futures):
                    self.on_tool_end(futures[future], future.result())
            except BaseException:
                _cancel(futures)
                raise
        return tuple(ToolResult(call, future.result()) for future, call in futures.items())

    def call(self, call: ToolCall) -> dict[str, Any]:
        """Run one tool call through the executor and return its envelope.

        Arguments the provider could not parse get ``INVALID_PARAMS`` without running
        anything; the provider undoes its schema changes (``prepare_arguments``) first.
        """
        unparsed = None
        if call.arguments is None:
            unparsed = call.arguments_error or "not a JSON object"
        return self.app.executor.call(
            self.registry, call.name, call.arguments, call_id=call.id, unparsed=unparsed,
            prepare=self.provider.prepare_arguments,
        ).envelope


def _cancel(futures: Mapping[Future[Any], ToolCall]) -> None:
    """Kill running tools until every worker has returned (a tool may start late)."""
    for future in futures:
        future.cancel()
    terminate_until(lambda poll: not wait(futures, timeout=poll).not_done)
