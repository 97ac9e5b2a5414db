"""A provider-neutral conversation: what was said, which tools were called, what they returned.

Providers translate it to and from their wire format; the agent loop appends to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """One tool call the model made.

    ``arguments`` is the parsed JSON object; when the model sent something that is not
    a JSON object, it is ``None`` and ``arguments_error`` says why (the loop answers
    with an ``INVALID_PARAMS`` envelope instead of running the tool).
    """

    id: str
    name: str
    arguments: Mapping[str, Any] | None
    arguments_error: str | None = None


@dataclass(frozen=True)
class UserMessage:
    """Text the user typed."""

    text: str


@dataclass(frozen=True)
class AssistantMessage:
    """One model turn: its text and its tool calls, in the order the model made them.

    ``raw`` keeps the provider's own form of the turn when it must be sent back
    unchanged (Gemini's ``thoughtSignature``); ``stop_reason`` is the provider's word.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    raw: Any = None
    stop_reason: str | None = None


@dataclass(frozen=True)
class ToolResult:
    """The envelope one tool call produced (``tool_success`` ...), for the model."""

    call: ToolCall
    envelope: Mapping[str, Any]

    @property
    def is_error(self) -> bool:
        """True when the envelope reports a failure (``tool_success`` false)."""
        return not self.envelope.get("tool_success", False)


@dataclass(frozen=True)
class ToolResultsMessage:
    """The results of every tool call of one assistant turn, in call order."""

    results: tuple[ToolResult, ...]


Message = UserMessage | AssistantMessage | ToolResultsMessage


@dataclass
class Conversation:
    """The messages so far, oldest first, and an optional system prompt."""

    messages: list[Message] = field(default_factory=list)
    system: str | None = None

    def add(self, message: Message) -> None:
        """Append one message."""
        self.messages.append(message)


@dataclass(frozen=True)
class TextDelta:
    """A piece of assistant text as it streams in."""

    text: str
