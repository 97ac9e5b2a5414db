"""The agent loop: ask the model, run the tools it calls, send the results back, repeat.

UI-agnostic: ``ikigai ask`` and ``ikigai chat`` pass callbacks that print. The calls of a
model turn go to the session's tool boundary (:class:`~ikigai_core.toolcalls.ToolCalls`),
which runs each in its own worker thread; the results go back in call order (issue 4,
"Core: conversation, request building, loop").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ikigai_core.cancel import Cancel, Cancelled
from ikigai_core.conversation import (
    AssistantMessage,
    Conversation,
    ToolResult,
    ToolResultsMessage,
    UserMessage,
)
from ikigai_core.errors import ContextTooLong, IkigaiError
from ikigai_core.providers import provider_environ
from ikigai_core.toolcalls import ToolCalls
from ikigai_core.toolset import Toolset
from ikigai_core.transport import send_turn

if TYPE_CHECKING:
    from ikigai_core.app import App
    from ikigai_core.attachments import Attachment
    from ikigai_core.budget import Meter
    from ikigai_core.providers import Provider
    from ikigai_core.tools import Tool


__all__ = ["Agent", "Cancelled", "TurnLimitReached"]
"""``Cancelled`` lives in :mod:`ikigai_core.cancel`; importable from here too."""


class ContextKeeper(Protocol):
    """What the agent loop sends of a conversation (:class:`~ikigai_core.compaction.Keeper`)."""

    def prepare(self, agent: Agent, conversation: Conversation,
                tools: Sequence[Tool]) -> Conversation:
        """The conversation to send ``tools`` with next (compacting it first if need be)."""

    def overflowed(self, agent: Agent, conversation: Conversation,
                   tools: Sequence[Tool]) -> bool:
        """The provider refused the request as too long: compact; ``False`` if it cannot."""


class TurnLimitReached(IkigaiError):
    """The model still wanted to call tools when the turn limit was reached."""


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
    :param turn_limit: what sets ``max_turns``, which the error reaching it tells the user
        to raise (a sub-agent's is its definition's or the setting, never ``--max-turns``).
    :param on_request: called before each request to the model (a front end starts a spinner).
    :param on_text: receives the model's text as it arrives (whole per turn without ``stream``).
    :param on_thinking: receives the model's thinking as it arrives, as ``on_text``.
    :param reasoning: how hard the model thinks (``low``, ``medium``, ``high``; ``None``:
        its default).
    :param calls: the tool boundary the model's calls go through (a session's; default: one
        on the app's executor, sharing ``toolset``). Once its ``cancelled`` event is set,
        :meth:`run` stops at the next piece of text, before the next request, or while
        tools run (killing them), raising :class:`~ikigai_core.cancel.Cancelled` (or
        what :meth:`stop` was given).
    :param meter: counts each answer against a budget, and is checked before each
        request and before an answer's tools run (``None``: no budget).
    :param context: makes what each request sends of the conversation, and compacts it
        (:class:`~ikigai_core.compaction.Keeper`); ``None``: the whole conversation.
    """

    app: App
    provider: Provider
    model: str
    registry: Mapping[str, Tool] = field(default_factory=dict)
    toolset: Toolset = field(default_factory=Toolset)
    stream: bool = True
    max_turns: int = 25
    turn_limit: str = "--max-turns (or IKIGAI_MAX_TURNS)"
    on_request: Callable[[], None] = lambda: None
    on_text: Callable[[str], None] = lambda text: None
    on_thinking: Callable[[str], None] = lambda text: None
    reasoning: str | None = None
    calls: ToolCalls | None = field(default=None, repr=False)
    meter: Meter | None = None
    context: ContextKeeper | None = None
    _tools_changed: Any = field(default=None, init=False, repr=False)
    _sent: tuple[str, ...] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.calls is None:
            self.calls = ToolCalls(self.app, self.toolset)

    @property
    def boundary(self) -> ToolCalls:
        """The tool boundary the model's calls go through."""
        assert self.calls is not None  # set in __post_init__
        return self.calls

    @property
    def cancelled(self) -> Cancel:
        """Set it to stop :meth:`run` (:class:`~ikigai_core.cancel.Cancelled`), its
        request to the model at once."""
        return self.boundary.cancelled

    def stop(self, reason: IkigaiError) -> None:
        """Stop the run in progress as :attr:`cancelled` does, from any thread, raising
        ``reason`` (a budget's limit reached while tools run)."""
        self.boundary.stop(reason)

    def rearm(self) -> None:
        """Clear a cancellation or :meth:`stop` before a new run."""
        self.boundary.rearm()

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
                conversation.truncate(mark)
            self._close_calls(conversation, str(exc))
            raise
        except BaseException:
            conversation.truncate(mark)
            raise

    def _close_calls(self, conversation: Conversation, why: str) -> None:
        """Answer the calls of a last turn whose tools did not run, with ``why``."""
        from ikigai_core.outcome import BUDGET_EXCEEDED

        last = conversation.messages[-1] if conversation.messages else None
        if isinstance(last, AssistantMessage) and last.tool_calls:
            executor = self.boundary.executor
            conversation.add(ToolResultsMessage(tuple(
                ToolResult(call, executor.unrun(call.name, f"not run: {why}", BUDGET_EXCEEDED))
                for call in last.tool_calls)))

    def _note_tool_change(self, tools: Sequence[Tool]) -> None:
        """Report (an ``info`` notice) when the tools sent differ from the last request's:
        they open every request, so the provider's prompt cache starts again (issue 26)."""
        sent = tuple(sorted(tool.name for tool in tools))
        if self._sent is not None and sent != self._sent:
            added = [f"+{name}" for name in sent if name not in self._sent]
            dropped = [f"-{name}" for name in self._sent if name not in sent]
            self.app.notices.report(
                f"the tools sent changed ({' '.join(added + dropped)}): the provider's prompt "
                "cache starts again from here", kind="info")
        self._sent = sent

    def _loop(self, conversation: Conversation) -> AssistantMessage:
        turns = 0
        while True:
            self._follow_tool_changes()
            tools = self.toolset.tools(self.registry)
            self._note_tool_change(tools)
            self.boundary.check_cancelled()
            if self.meter is not None:
                self.meter.check()
            try:
                reply = self._ask(conversation, tools)
            except Cancelled:  # hung up on mid-request: what it was stopped for (a budget)
                self.boundary.check_cancelled()
                raise
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
                    f"wants to call tools; raise {self.turn_limit}"
                )
            conversation.add(ToolResultsMessage(self.boundary.run(
                reply.tool_calls, self.boundary.offered(tools, self.provider),
                tuple(conversation.messages), prepare=self.provider.prepare_arguments)))

    def _ask(self, conversation: Conversation, tools: Sequence[Tool]) -> AssistantMessage:
        """The model's next turn, sent what :attr:`context` makes of ``conversation``;
        when the provider says it is too long, compacted once and asked again."""
        retried = False
        while True:
            sent = conversation if self.context is None else self.context.prepare(
                self, conversation, tools)
            self.on_request()
            try:
                return send_turn(
                    self.provider, sent, tools, model=self.model, stream=self.stream,
                    environ=provider_environ(self.provider, self.app.settings.providers,
                                             self.app.environ),
                    on_text=self._text if self.stream else None,
                    reasoning=self.reasoning, on_thinking=self.on_thinking,
                    cancel=self.cancelled,
                )
            except ContextTooLong:
                if retried or self.context is None or not self.context.overflowed(
                        self, conversation, tools):
                    raise
                retried = True

    def _text(self, piece: str) -> None:
        self.boundary.check_cancelled()
        self.on_text(piece)

    def _follow_tool_changes(self) -> None:
        """Discover again when a plugin says its tools changed (``ikigai_tools_changed``)."""
        if self._tools_changed is None:
            from ikigai_core.hookcall import Notifier

            self._tools_changed = Notifier(self.app.pm, "ikigai_tools_changed", self.app.notices)
        if any(self._tools_changed()):
            self.registry = self.app.registry()
