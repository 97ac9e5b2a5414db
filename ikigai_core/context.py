"""What the model is sent of a conversation, and how much of its context window that fills.

The conversation keeps every message; the model is sent a *view* of it (:func:`view`):
the instructions of a skill the user loaded mid-conversation sent with the prompt after
them (:func:`with_skills_sent`); after a compaction
(:class:`~ikigai_core.conversation.Compaction`), the summary in place of the messages it
covers, the skills those loaded moved into the system prompt; and old tool
results pruned (:func:`pruned`): a result answering a model turn at least
``prune_after`` turns back is replaced by a placeholder naming the call, in steps of
``prune_after`` turns, so the request's prefix (what providers cache) changes once a step,
not every turn.

Tokens are the provider's: the view is estimated at :data:`BYTES_PER_TOKEN` bytes a token,
and once the provider has answered, that estimate is scaled by what it reported for the
request before (:class:`Gauge`). A model's window comes from the ``context_window``
setting, else the provider's model listing (``ikigai models``, cached), else the models it
knows, else ``genai-prices``' table when that is installed (:func:`window_of`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ikigai_core.conversation import (
    AssistantMessage,
    Compaction,
    Conversation,
    Message,
    ToolResult,
    ToolResultsMessage,
    UserMessage,
)
from ikigai_core.prompt import join, with_skill
from ikigai_core.skills import LOAD_SKILL

if TYPE_CHECKING:
    from ikigai_core.app import App
    from ikigai_core.providers import Provider
    from ikigai_core.skills import Skill
    from ikigai_core.tools import Tool

BYTES_PER_TOKEN = 4
"""The estimate before a provider has counted: UTF-8 bytes per token (English prose and
JSON come to 3.5-4.5 with the providers' tokenizers)."""
PRUNE_MIN_BYTES = 1024
"""A result shorter than this (as JSON) is never pruned: its placeholder saves nothing."""
ARGUMENTS_NAMED = 200
"""Characters of a pruned call's arguments its placeholder repeats."""
COMPACT = (",", ":")
"""JSON separators as requests are sent (httpx's)."""
SUMMARY_HEAD = "[Summary of the earlier conversation, written when it was compacted]"


def estimate_tokens(text: str) -> int:
    """``text``'s tokens at :data:`BYTES_PER_TOKEN` bytes each, rounded up."""
    return -(-len(text.encode("utf-8", "surrogatepass")) // BYTES_PER_TOKEN)


# -- The window -------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    """A model's context window in tokens (``None``: unknown) and where that came from:
    ``setting``, ``listing`` (the provider's API), ``known`` (the provider plugin),
    ``genai-prices``."""

    tokens: int | None
    source: str | None = None


def window_of(app: App, provider: Provider, model: str) -> Window:
    """``model``'s context window: the ``context_window`` setting, else the provider's
    cached model listing, else its known models, else genai-prices' table (if installed).
    Nothing is asked of the network."""
    if app.settings.context_window is not None:
        return Window(app.settings.context_window, "setting")
    from ikigai_core.models import cached_models

    listed = cached_models(provider, app.home, app.environ).get(model)
    if isinstance(listed, int):
        return Window(listed, "listing")
    known = provider.known_models.get(model)
    if known is not None:
        return Window(known, "known")
    table = _genai_prices_window(provider.name, model)
    return Window(table, "genai-prices") if table is not None else Window(None)


def _genai_prices_window(provider: str, model: str) -> int | None:
    """``model``'s window in genai-prices' table (pydantic's, kept from the providers'
    pages), when that library is installed and knows it."""
    try:
        from genai_prices.data_snapshot import get_snapshot
    except ImportError:
        return None
    try:
        found = get_snapshot().find_provider_model(model, None, provider, None)[1]
    except LookupError:
        return None
    window = getattr(found, "context_window", None)
    return window if isinstance(window, int) and window > 0 else None


# -- The view ---------------------------------------------------------------------


def current(conversation: Conversation) -> Compaction | None:
    """The compaction in force (``None``: none, or the last was undone)."""
    last = conversation.compactions[-1] if conversation.compactions else None
    return last if last is not None and last.summary is not None else None


def view(conversation: Conversation, *, prune_after: int,
         skills: Mapping[str, Skill] | None = None) -> Conversation:
    """What the model is sent of ``conversation``: its old tool results pruned (counting
    the model turns of the whole conversation: :func:`pruned`), the skills the user loaded
    sent with the next prompt (:func:`with_skills_sent`); after the compaction in force,
    its summary and the messages after those it covers (the skills those loaded added to
    the system prompt: a skill message's text as it was sent, a ``load_skill`` result's
    skill from ``skills``)."""
    compaction = current(conversation)
    system, messages = conversation.system, pruned(conversation.messages, prune_after)
    if compaction is not None:
        assert compaction.summary is not None
        for message in messages[:compaction.covers]:
            if isinstance(message, UserMessage) and message.skill is not None:
                system = join(system, message.text)
            for name in loaded_skills([message]):
                if skills and name in skills:
                    system = with_skill(system, skills[name])
        messages = messages[compaction.covers:]
    messages = with_skills_sent(messages)
    if compaction is not None:
        head = f"{SUMMARY_HEAD}\n\n{compaction.summary}"
        if messages and isinstance(messages[0], UserMessage):
            messages[0] = messages[0].replace(text=f"{head}\n\n{messages[0].text}")
        else:
            messages.insert(0, UserMessage(head))
    return Conversation(messages, system)


def with_skills_sent(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with each skill message (:attr:`UserMessage.skill
    <ikigai_core.conversation.UserMessage.skill>`) sent as the start of the prompt after
    it, a blank line between them: one user message, as every API's turn order wants, and
    the same bytes on every later request. One with no prompt after it yet stays alone."""
    out: list[Message] = []
    waiting: list[UserMessage] = []
    for message in messages:
        if isinstance(message, UserMessage) and message.skill is not None:
            waiting.append(message)
        elif waiting and isinstance(message, UserMessage):
            out.append(message.replace(text="\n\n".join([*(m.text for m in waiting),
                                                          message.text])))
            waiting = []
        else:
            out += [*waiting, message]
            waiting = []
    return out + waiting


def loaded_skills(messages: Sequence[Message]) -> list[str]:
    """The skills the model loaded with ``load_skill`` among ``messages``, in order."""
    return [result.envelope["result"]["skill"] for message in messages
            if isinstance(message, ToolResultsMessage) for result in message.results
            if result.call.name == LOAD_SKILL and _loaded(result.envelope)]


def skills_in(messages: Sequence[Message]) -> set[str]:
    """The skills whose instructions ``messages`` carry: loaded by the model
    (:func:`loaded_skills`) or by the user once the conversation had begun (a skill
    message)."""
    return {*loaded_skills(messages), *(m.skill for m in messages
                                        if isinstance(m, UserMessage) and m.skill is not None)}


def _loaded(envelope: Mapping[str, Any]) -> bool:
    result = envelope.get("result")
    return (bool(envelope.get("tool_success")) and isinstance(result, Mapping)
            and isinstance(result.get("skill"), str))


def pruned(messages: Sequence[Message], after: int) -> list[Message]:
    """``messages`` with the results of the model turns before the pruning boundary
    replaced by placeholders (a ``load_skill`` result, and one under
    :data:`PRUNE_MIN_BYTES`, are kept). The boundary moves in steps of ``after`` model
    turns: with ``T`` turns, the first ``(T // after - 1) * after`` are pruned, so every
    pruned result is at least ``after`` turns old and the view changes every ``after``
    turns only."""
    turns = sum(isinstance(m, AssistantMessage) for m in messages)
    boundary = (turns // after - 1) * after
    if boundary <= 0:
        return list(messages)
    seen, out = 0, []
    for message in messages:
        if isinstance(message, AssistantMessage):
            seen += 1
        elif isinstance(message, ToolResultsMessage) and seen <= boundary:
            message = ToolResultsMessage(tuple(_placeholder(r) for r in message.results))
        out.append(message)
    return out


def _placeholder(result: ToolResult) -> ToolResult:
    """``result`` pruned: a short envelope naming the call and how to get it again."""
    size = len(result.envelope_json.encode())
    if result.call.name == LOAD_SKILL or size < PRUNE_MIN_BYTES:
        return result
    arguments = json.dumps(result.call.arguments, ensure_ascii=False)
    if len(arguments) > ARGUMENTS_NAMED:
        arguments = arguments[:ARGUMENTS_NAMED - 1] + "…"
    note = (f"pruned: this result of {result.call.name} {arguments} ({size} bytes) was left "
            "out to save context; call the tool again if you need it")
    return result.replace(envelope={"tool_success": not result.is_error, "pruned": note},
                          attachments=())


# -- Counting ---------------------------------------------------------------------


def tools_text(provider: Provider, tools: Sequence[Tool]) -> str:
    """The tool declarations as a request carries them (for counting)."""
    return json.dumps(provider.declarations(tools), ensure_ascii=False, separators=COMPACT)


def conversation_text(conversation: Conversation, provider: Provider) -> str:
    """The conversation as ``provider``'s messages (for counting)."""
    return json.dumps(provider.wire_messages(conversation), ensure_ascii=False, separators=COMPACT)


class Gauge:
    """Counts a request's tokens: :data:`BYTES_PER_TOKEN` bytes a token, scaled by how
    the provider counted the request before (its usage) against that estimate."""

    def __init__(self) -> None:
        self.ratio = 1.0
        """The provider's tokens per estimated token, from its last answer."""
        self.asked: tuple[int, int] | None = None
        """The message count and estimated tokens of the request awaiting its answer."""

    def count(self, estimate: int) -> int:
        """``estimate`` in the provider's tokens."""
        return round(estimate * self.ratio)

    def sent(self, conversation: Conversation, estimate: int) -> None:
        """A request of ``estimate`` tokens goes out for ``conversation`` as it stands."""
        self.asked = (len(conversation.messages), estimate)

    def answered(self, conversation: Conversation) -> None:
        """Learn from the usage of the answer to the last request, if it is in
        ``conversation``."""
        if self.asked is None:
            return
        index, estimate = self.asked
        self.asked = None
        messages = conversation.messages
        if index < len(messages) and estimate > 0:
            reply = messages[index]
            if isinstance(reply, AssistantMessage) and reply.usage is not None:
                if reply.usage.input_tokens > 0:  # cache reads and writes included
                    self.ratio = reply.usage.input_tokens / estimate


@dataclass(frozen=True)
class Breakdown:
    """Where a conversation's tokens go (``/context``), in the provider's tokens."""

    system: int
    tools: int
    skills: int
    messages: int
    results: int
    window: Window

    @property
    def total(self) -> int:
        """Everything a request carries."""
        return self.system + self.tools + self.skills + self.messages + self.results


def breakdown(sent: Conversation, provider: Provider, tools: Sequence[Tool],
              skills: Sequence[Skill], gauge: Gauge, window: Window) -> Breakdown:
    """The parts of the request ``sent`` (a view) would make with ``tools``: the system
    prompt, the tool declarations, the ``skills`` loaded (their text in the system prompt,
    a user's message or a ``load_skill`` result), the messages, the tool results."""
    system = sent.system or ""
    prompts = [m.text for m in sent.messages if isinstance(m, UserMessage)]
    skill_text = skill_prompts = 0
    for skill in skills:
        section = with_skill(None, skill)
        if section in system:
            system = system.replace(section, "")
            skill_text += estimate_tokens(section)
        elif any(section in text for text in prompts):
            skill_prompts += estimate_tokens(section)
    results = skill_results = 0
    for message in sent.messages:
        if isinstance(message, ToolResultsMessage):
            for result in message.results:
                size = estimate_tokens(result.envelope_json)
                if result.call.name == LOAD_SKILL:
                    skill_results += size
                else:
                    results += size
    everything = estimate_tokens(conversation_text(Conversation(list(sent.messages)), provider))
    return Breakdown(
        system=gauge.count(estimate_tokens(system)),
        tools=gauge.count(estimate_tokens(tools_text(provider, tools)) if tools else 0),
        skills=gauge.count(skill_text + skill_prompts + skill_results),
        messages=gauge.count(max(everything - results - skill_results - skill_prompts, 0)),
        results=gauge.count(results), window=window)
