"""Compaction: the older part of a conversation summarised by the model, so a long session
never outgrows the model's context window.

A :class:`Keeper` sits in a session's agent loop (:attr:`ikigai_core.agent.Agent.context`):
before each request it compacts when the request would fill ``compact_at`` of the window,
and hands the loop the view to send (:func:`ikigai_core.context.view`); when the provider
still says the context is too long, the loop has it compact once and asks again.
``/compact`` and ``/uncompact`` call :meth:`Keeper.compact` and :meth:`Keeper.uncompact`.

A compaction summarises every message before the last ``compact_keep`` prompts (or, in a
long tool loop, before the latest model turns that fit in :data:`KEEP_SHARE` of the
window); the summary of an earlier compaction is summarised along. The system prompt, the
skills loaded and the kept messages go on verbatim. Nothing is deleted: the compaction is
one more entry in the conversation and in ``sessions.db``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ikigai_core.context import (
    BYTES_PER_TOKEN,
    Gauge,
    Window,
    conversation_text,
    current,
    estimate_tokens,
    pruned,
    tools_text,
    view,
    window_of,
)
from ikigai_core.conversation import (
    AssistantMessage,
    Compaction,
    Conversation,
    Message,
    ToolResultsMessage,
    Usage,
    UserMessage,
)
from ikigai_core.errors import IkigaiError
from ikigai_core.providers import provider_environ
from ikigai_core.transport import send_turn

if TYPE_CHECKING:
    from ikigai_core.agent import Agent
    from ikigai_core.app import App
    from ikigai_core.tools import Tool

KEEP_SHARE = 0.5
"""The most the messages kept verbatim may fill of the room a compaction has: what
``compact_at`` of the window leaves beside the system prompt and the tools. Past it, fewer
are kept, so the conversation can grow as much again before the next compaction."""
RESULT_SHOWN = 2000
"""Characters of each tool result the summarising model reads."""
TRANSCRIPT_SHARE = 0.5
"""The most of the window the transcript to summarise may fill (its oldest part goes)."""
SUMMARY_SYSTEM = (
    "You compact a conversation between a user and an AI assistant that uses tools, so "
    "the assistant can go on without the full transcript. Write a summary the assistant "
    "can rely on: the user's goals and requests, decisions made, what was done and found "
    "(files, commands, results, errors), and what is left to do. Be specific (paths, "
    "names, numbers); leave out chatter. Answer with the summary only.")
"""The summarising request's system prompt."""


class Keeper:
    """Keeps one conversation within its model's context window.

    :param app: the invocation (its settings: ``context_window``, ``compact_at``,
        ``compact_keep``, ``compact_instructions``, ``prune_after``).
    :param on_compact: told of each compaction made (a front end shows a line).
    """

    def __init__(self, app: App,
                 on_compact: Callable[[Compaction], None] = lambda compaction: None) -> None:
        self.app = app
        self.on_compact = on_compact
        self.gauge = Gauge()
        self._windows: dict[tuple[str, str], Window] = {}

    def window(self, agent: Agent) -> Window:
        """The context window of ``agent``'s model (looked up once per model)."""
        key = (agent.provider.name, agent.model)
        if key not in self._windows:
            self._windows[key] = window_of(self.app, agent.provider, agent.model)
        return self._windows[key]

    def view(self, agent: Agent, conversation: Conversation) -> Conversation:
        """What ``agent``'s model is sent of ``conversation``."""
        return view(conversation, prune_after=self.app.settings.prune_after,
                    skills=agent.toolset.skills)

    def tokens(self, agent: Agent, sent: Conversation, tools: Sequence[Tool]) -> int:
        """The estimated tokens of a request sending ``sent`` and ``tools``."""
        return self.gauge.count(self._estimate(agent, sent, tools))

    def _estimate(self, agent: Agent, sent: Conversation, tools: Sequence[Tool]) -> int:
        text = conversation_text(sent, agent.provider)
        return estimate_tokens(text + (tools_text(agent.provider, tools) if tools else ""))

    def prepare(self, agent: Agent, conversation: Conversation,
                tools: Sequence[Tool]) -> Conversation:
        """The view to send next; compacted first when it would fill ``compact_at`` of
        the window (and there is something to compact)."""
        self.gauge.answered(conversation)
        sent = self.view(agent, conversation)
        if self._due(agent, sent, tools):
            if self.compact(agent, conversation, reason="auto", tools=tools) is not None:
                sent = self.view(agent, conversation)
        self.gauge.sent(conversation, self._estimate(agent, sent, tools))
        return sent

    def compacts(self, agent: Agent, conversation: Conversation,
                 tools: Sequence[Tool]) -> bool:
        """Whether :meth:`prepare` would compact ``conversation`` before sending it (for
        ``ikigai request``: nothing is summarised here)."""
        if not self._due(agent, self.view(agent, conversation), tools):
            return False
        start, covers, _ = self._plan(agent, conversation, tools, "auto")
        return covers > start

    def _due(self, agent: Agent, sent: Conversation, tools: Sequence[Tool]) -> bool:
        """Whether a request sending the view ``sent`` and ``tools`` would fill
        ``compact_at`` of the window."""
        window = self.window(agent).tokens
        return window is not None and (
            self.tokens(agent, sent, tools) >= self.app.settings.compact_at * window)

    def overflowed(self, agent: Agent, conversation: Conversation,
                   tools: Sequence[Tool]) -> bool:
        """The provider said the request was too long: compact (``True``), or ``False``
        when nothing is left to compact."""
        self.gauge.asked = None
        return self.compact(agent, conversation, reason="overflow", tools=tools) is not None

    def compact(self, agent: Agent, conversation: Conversation, *, reason: str,
                instructions: str | None = None,
                tools: Sequence[Tool] = ()) -> Compaction | None:
        """Summarise what comes before the messages kept; ``None`` when nothing is
        (everything left is kept verbatim). The summarising request's failure is a
        :class:`~ikigai_core.errors.ProviderError`."""
        before = current(conversation)
        start, covers, tokens_before = self._plan(agent, conversation, tools, reason)
        if covers <= start:
            return None
        summary, usage = summarise(agent, conversation.messages[start:covers],
                                   before.summary if before is not None else None,
                                   self._instructions(instructions), self.window(agent))
        if agent.meter is not None:  # the summary is paid for as any answer is
            agent.meter.answered(usage)
        made = Compaction(summary, covers, len(conversation.messages), reason, usage=usage)
        conversation.compactions.append(made)
        after = self.tokens(agent, self.view(agent, conversation), tools)
        conversation.compactions[-1] = made = made.replace(tokens=(tokens_before, after))
        self.on_compact(made)
        return made

    def _plan(self, agent: Agent, conversation: Conversation, tools: Sequence[Tool],
              reason: str) -> tuple[int, int, int]:
        """Where a compaction made now for ``reason`` starts and ends (the messages it
        would summarise: ``start`` to ``covers``), and the tokens of the view before it."""
        before = current(conversation)
        start = before.covers if before is not None else 0
        sent = self.view(agent, conversation)
        tokens_before = self.tokens(agent, sent, tools)
        covers = self._split(agent, conversation, start, self._budget(
            agent, tokens_before - self.tokens(agent, Conversation(system=sent.system), tools),
            tokens_before, reason))
        return start, covers, tokens_before

    def uncompact(self, conversation: Conversation) -> Compaction | None:
        """Undo the compaction in force: the model is sent every message again; ``None``
        when none is in force."""
        if current(conversation) is None:
            return None
        made = Compaction(None, 0, len(conversation.messages), "undo")
        conversation.compactions.append(made)
        return made

    def _instructions(self, given: str | None) -> str:
        """The summary's instructions: ``compact_instructions``, then ``given``."""
        parts = [self.app.settings.compact_instructions, given]
        return "\n\n".join(p for p in parts if p)

    def _budget(self, agent: Agent, messages: int, tokens: int, reason: str) -> float | None:
        """The most tokens the kept messages may have, when the request has ``tokens``,
        ``messages`` of them the messages': :data:`KEEP_SHARE` of the room the window
        leaves them; when the window is unknown, half of what they have if the provider
        said it was too long, else no limit."""
        window = self.window(agent).tokens
        if window is None:
            return messages * KEEP_SHARE if reason == "overflow" else None
        room = self.app.settings.compact_at * window - (tokens - messages)
        return max(room * KEEP_SHARE, 0.0)

    def _split(self, agent: Agent, conversation: Conversation, start: int,
               budget: float | None) -> int:
        """Where the messages kept verbatim start: the last ``compact_keep`` prompts, later
        (at a model turn) while they have more than ``budget`` tokens; at least the latest
        model turn and its results are kept."""
        messages = conversation.messages
        prompts = [i for i, m in enumerate(messages)
                   if isinstance(m, UserMessage) and m.skill is None]
        keep = self.app.settings.compact_keep
        split = max(prompts[-keep] if len(prompts) >= keep else 0, start)
        last_turn = max((i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)),
                        default=len(messages))
        shown = pruned(messages, self.app.settings.prune_after)
        while budget is not None and split < last_turn and (
                self._kept_tokens(agent, shown[split:]) > budget):
            split = next(i for i in range(split + 1, len(messages))
                         if not isinstance(messages[i], ToolResultsMessage))
        return split

    def _kept_tokens(self, agent: Agent, messages: Sequence[Message]) -> int:
        return self.gauge.count(estimate_tokens(conversation_text(
            Conversation(list(messages)), agent.provider)))


@dataclass
class Transcript:
    """The messages to summarise as plain text, each tool result cut to
    :data:`RESULT_SHOWN` characters."""

    lines: list[str] = field(default_factory=list)

    def add(self, message: Message) -> None:
        """Add one message's lines."""
        if isinstance(message, UserMessage) and message.skill is not None:
            self.lines.append(f"User loaded the skill {message.skill} (its instructions "
                              "stay in the system prompt).")
        elif isinstance(message, UserMessage):
            images = f" [{len(message.images)} image(s) attached]" if message.images else ""
            self.lines.append(f"User: {message.text}{images}")
        elif isinstance(message, AssistantMessage):
            if message.text:
                self.lines.append(f"Assistant: {message.text}")
            self.lines += [f"Assistant called {call.name} "
                           f"{json.dumps(call.arguments, ensure_ascii=False)[:RESULT_SHOWN]}"
                           for call in message.tool_calls]
        else:
            for result in message.results:
                text = json.dumps(result.envelope, ensure_ascii=False)
                cut = f"… ({len(text)} characters in all)" if len(text) > RESULT_SHOWN else ""
                self.lines.append(f"Result of {result.call.name}: {text[:RESULT_SHOWN]}{cut}")

    def text(self, limit: int | None) -> str:
        """The transcript, its oldest lines left out past ``limit`` characters."""
        lines = list(self.lines)
        dropped = False
        while limit is not None and len(lines) > 1 and sum(map(len, lines)) > limit:
            lines.pop(0)
            dropped = True
        return "\n\n".join((["[…the oldest part is left out]"] if dropped else []) + lines)


def summarise(agent: Agent, messages: Sequence[Message], earlier: str | None,
              instructions: str, window: Window) -> tuple[str, Usage | None]:
    """The model's summary of ``messages`` (after the ``earlier`` summary), and the usage
    of the request; an empty answer is an :class:`IkigaiError`."""
    transcript = Transcript()
    for message in messages:
        transcript.add(message)
    limit = (None if window.tokens is None
             else int(window.tokens * TRANSCRIPT_SHARE) * BYTES_PER_TOKEN)
    parts = [f"The summary so far:\n\n{earlier}" if earlier else None,
             "The conversation to summarise:", transcript.text(limit),
             f"Also follow these instructions for the summary:\n\n{instructions}"
             if instructions else None]
    request = Conversation([UserMessage("\n\n".join(p for p in parts if p))],
                           system=SUMMARY_SYSTEM)
    reply = send_turn(agent.provider, request, (), model=agent.model, stream=False,
                      environ=provider_environ(agent.provider, agent.app.settings.providers,
                                               agent.app.environ), cancel=agent.cancelled)
    if not reply.text.strip():
        raise IkigaiError("the model answered the compaction with no summary; the "
                          "conversation is left as it was")
    return reply.text.strip(), reply.usage
