"""A provider-neutral conversation: what was said, which tools were called, what they returned.

Providers translate it to and from their wire format; the agent loop appends to it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ikigai_core.record import Record

if TYPE_CHECKING:
    from ikigai_core.attachments import Attachment


class ToolCall(Record):
    """One tool call the model made.

    ``arguments`` is the parsed JSON object; when the model sent something that is not
    a JSON object, it is ``None`` and ``arguments_error`` says why (the loop answers
    with an ``INVALID_PARAMS`` envelope instead of running the tool).
    """

    id: str
    name: str
    arguments: Mapping[str, Any] | None
    arguments_error: str | None = None

    @property
    def arguments_or_empty(self) -> dict[str, Any]:
        """The arguments as an object to send back to the model: ``{}`` when they were
        broken."""
        return dict(self.arguments or {})


class UserMessage(Record):
    """Text the user typed (with the text of files it attached), and the images it
    attached, which go to the model natively (:meth:`Provider.user_entry
    <ikigai_core.providers.Provider.user_entry>`) and are recorded with the message.

    With ``skill`` set it is no prompt but the instructions of the skill of that name,
    which the user loaded once the conversation had begun (:mod:`ikigai_core.prompt`):
    they are sent with the next prompt (:func:`ikigai_core.context.view`), so the system
    prompt, and every cached prefix before them, stays as it was."""

    text: str
    images: tuple[Attachment, ...] = ()
    skill: str | None = None


MAX_TOKENS = 2**32
"""A provider's token count at or above this is no count (issue 21): sums of such
counts over a long session still fit the session log's 64-bit integers."""


def is_token_count(value: Any) -> bool:
    """True for a whole number of tokens a turn can have used: an ``int`` (not a bool) from
    0 up to :data:`MAX_TOKENS`; a negative, fractional or absurd count is ignored."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < MAX_TOKENS


class Usage(Record):
    """Tokens one model turn (or a sum of turns) used, as the provider reported them.

    ``input_tokens`` counts every input token, those read from the provider's prompt
    cache (``cache_read_tokens``) and those written to it (``cache_write_tokens``)
    included, whichever way the provider counts them (Anthropic reports the three
    apart; OpenAI and Gemini report the cached share of the whole).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def total(self) -> int:
        """Input and output tokens together."""
        return self.input_tokens + self.output_tokens

    @property
    def cache_hit(self) -> float | None:
        """The share of input tokens read from the cache (``None``: no input)."""
        return self.cache_read_tokens / self.input_tokens if self.input_tokens else None

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens,
                     self.output_tokens + other.output_tokens,
                     self.cache_read_tokens + other.cache_read_tokens,
                     self.cache_write_tokens + other.cache_write_tokens)

    def __sub__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens - other.input_tokens,
                     self.output_tokens - other.output_tokens,
                     self.cache_read_tokens - other.cache_read_tokens,
                     self.cache_write_tokens - other.cache_write_tokens)

    @classmethod
    def read(cls, fields: Any, input_key: str, output_key: str) -> Usage | None:
        """A provider's usage object (``{"prompt_tokens": 10, ...}``) read by its two key
        names; ``None`` when it holds neither as a count (:func:`is_token_count`)."""
        return UsageKeys(input_key, output_key).read(fields)


class UsageKeys(Record):
    """Where an API's usage object holds each count (a provider's ``usage_keys``).

    :param input: the input token count's key.
    :param output: the output token count's key.
    :param cache_read: the key of the input tokens read from the prompt cache; a dotted
        path reaches into a nested object (``"prompt_tokens_details.cached_tokens"``).
    :param cache_write: the same for the input tokens written to the cache.
    :param cache_apart: the input count leaves the cache reads and writes out (Anthropic's
        ``input_tokens``), so they are added to it.
    """

    input: str
    output: str
    cache_read: str | None = None
    cache_write: str | None = None
    cache_apart: bool = False

    def read(self, fields: Any) -> Usage | None:
        """The :class:`Usage` in ``fields``; ``None`` when it holds neither the input nor
        the output count (a count that is no :func:`is_token_count` is ignored)."""
        if not isinstance(fields, Mapping):
            return None
        given, output = _count(fields, self.input), _count(fields, self.output)
        if given is None and output is None:
            return None
        read, written = _count(fields, self.cache_read) or 0, _count(fields, self.cache_write) or 0
        given = (given or 0) + (read + written if self.cache_apart else 0)
        if read + written > given:  # nonsense: a cached share larger than the whole
            read = written = 0
        return Usage(given, output or 0, read, written)


def _count(fields: Mapping[str, Any], path: str | None) -> int | None:
    """The count at ``path`` (dotted) in ``fields``; ``None`` when absent or no count."""
    value: Any = fields
    for key in path.split(".") if path else ():
        value = value.get(key) if isinstance(value, Mapping) else None
    return value if path and is_token_count(value) else None


class AssistantMessage(Record):
    """One model turn: its text and its tool calls, in the order the model made them.

    ``raw`` keeps the provider's own form of the turn when it must be sent back
    unchanged (Gemini's ``thoughtSignature``); ``stop_reason`` is the provider's word;
    ``usage`` the tokens the provider says the turn used (``None`` when it said nothing);
    ``thinking`` the summary of its reasoning the provider showed (never sent back as
    such, nor recorded: ``raw`` holds what must go back).
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    raw: Any = None
    stop_reason: str | None = None
    usage: Usage | None = None
    thinking: str = ""


class ToolResult(Record):
    """The envelope one tool call produced (``tool_success`` ...), for the model, the
    seconds the call took (recorded in the session log, never sent), and the binary
    content the tool gave beside it, for providers that send it natively (never recorded:
    the envelope's text says what it was)."""

    call: ToolCall
    envelope: Mapping[str, Any]
    duration: float = 0.0
    attachments: tuple[Attachment, ...] = ()

    @property
    def envelope_json(self) -> str:
        """The envelope as JSON text (what most APIs take as a tool's result)."""
        return json.dumps(self.envelope)

    @property
    def is_error(self) -> bool:
        """True when the envelope reports a failure (``tool_success`` false)."""
        return not self.envelope.get("tool_success", False)


class ToolResultsMessage(Record):
    """The results of every tool call of one assistant turn, in call order."""

    results: tuple[ToolResult, ...]


Message = UserMessage | AssistantMessage | ToolResultsMessage


class Compaction(Record):
    """The conversation's first ``covers`` messages summarised as ``summary``, from the
    moment there were ``at`` messages on: the model is sent the summary instead of them
    (:mod:`ikigai_core.context`); the messages themselves stay. ``summary`` ``None`` (and
    ``covers`` 0) undoes the compaction before it (``/uncompact``).

    :param reason: ``auto`` (the threshold was reached), ``command`` (``/compact``),
        ``overflow`` (the provider said the context was too long) or ``undo``.
    :param tokens: the context's tokens before and after, as estimated then.
    :param usage: the tokens the summarising request used (``None``: none was made).
    """

    summary: str | None
    covers: int
    at: int
    reason: str
    tokens: tuple[int, int] = (0, 0)
    usage: Usage | None = None


@dataclass
class Conversation:
    """The messages so far, oldest first, an optional system prompt, and the compactions
    made of them (in the order they were made)."""

    messages: list[Message] = field(default_factory=list)
    system: str | None = None
    compactions: list[Compaction] = field(default_factory=list)

    def add(self, message: Message) -> None:
        """Append one message."""
        self.messages.append(message)

    def truncate(self, mark: int) -> None:
        """Forget the messages from ``mark`` on and the compactions made after them."""
        del self.messages[mark:]
        self.compactions[:] = [c for c in self.compactions if c.at <= mark]

    def entries(self, start: int, made: int) -> list[Message | Compaction]:
        """The messages from ``start`` on, with the compactions from the ``made``-th on
        where each was made: what the session log records of one prompt."""
        entries: list[Message | Compaction] = list(self.messages[start:])
        for compaction in reversed(self.compactions[made:]):
            entries.insert(max(compaction.at - start, 0), compaction)
        return entries


def usage_of(messages: Iterable[Message | Compaction]) -> Usage:
    """The tokens every model turn among ``messages`` used, added up (a compaction's
    summarising request too)."""
    total = Usage()
    for message in messages:
        if isinstance(message, (AssistantMessage, Compaction)) and message.usage is not None:
            total += message.usage
    return total


class TextDelta(Record):
    """A piece of assistant text as it streams in."""

    text: str


class ThinkingDelta(Record):
    """A piece of the model's thinking (its reasoning summary) as it streams in."""

    text: str
