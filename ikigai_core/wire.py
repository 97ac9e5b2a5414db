"""Pure helpers every provider's wire format shares: base URLs, JSON pieces, error lines,
and :class:`TurnBuilder`, which gathers one assistant turn from a reply or a stream.

Provider plugins import this module at load time, so it stays free of network code
(``ikigai_core.transport`` does the sending).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ikigai_core.conversation import (
    AssistantMessage,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    UsageKeys,
)
from ikigai_core.errors import ProviderError
from ikigai_core.strictjson import loads

MESSAGE_LIMIT = 300
"""Longest provider message quoted in one of our error lines."""


def base_url(environ: Mapping[str, str], var: str, default: str) -> str:
    """The API base URL: ``$var`` when set and not empty, else ``default``; no trailing slash."""
    return (environ.get(var) or default).rstrip("/")


def one_line(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` with its whitespace collapsed, cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def error_body_message(body: bytes) -> str | None:
    """The provider's own message in an error body, on one line, or ``None``.

    Reads ``{"error": {"message": ...}}`` (OpenAI, Anthropic, Gemini), the same inside a
    list (Gemini streams), ``{"error": "..."}`` and ``{"message": ...}``; a body that is
    not JSON is quoted as text.
    """
    try:
        data: Any = loads(body)
    except ValueError:
        text = body.decode("utf-8", "replace").strip()
        return one_line(text) if text else None
    if isinstance(data, list) and data:
        data = data[0]
    if not isinstance(data, Mapping):
        return None
    error = data.get("error", data)
    message = error.get("message") if isinstance(error, Mapping) else error
    return one_line(message) if isinstance(message, str) and message.strip() else None


def http_error_message(
    provider: Any, status: int, body: bytes, *, model: str,
    key_env: str | None = None, key_rejected: bool = False,
) -> str:
    """The standard line for an HTTP error status (``error_message`` of the providers).

    ``provider`` has a ``name`` and ``api_key_env``. ``key_rejected`` marks a status
    other than 401 that the provider uses for a bad key (Gemini answers 400
    ``API_KEY_INVALID``). The key's variable (``key_env``, the one it was read from;
    ``None`` when no key was sent) is named, never the provider's message (it may quote
    part of the key).
    """
    name = provider.name
    variables = " or ".join(provider.api_key_env)
    detail = error_body_message(body)
    if (status == 401 or key_rejected) and key_env:
        return f"Provider '{name}' rejected the API key (HTTP {status}): set a valid {key_env}"
    if status == 401 and variables:
        return f"Provider '{name}' wants an API key (HTTP 401): set {variables}"
    key_env = key_env or variables or "the API key"
    if status == 404:
        return f"Model '{model}' not found at provider '{name}' (HTTP 404): check --model"
    if status == 403:
        return (
            f"Provider '{name}' refused the request (HTTP 403): {detail or 'permission denied'}; "
            f"check that {key_env} may use model '{model}'"
        )
    if status == 400:
        return f"Provider '{name}' rejected the request (HTTP 400): {detail or 'no reason given'}"
    if status == 429:
        return (
            f"Provider '{name}' is rate limiting (HTTP 429): {detail or 'too many requests'}; "
            "try again later"
        )
    return f"Provider '{name}' failed (HTTP {status}): {detail or 'no reason given'}"


def load_object(
    provider_name: str, text: str | bytes, what: str = "stream event"
) -> dict[str, Any]:
    """The JSON object in ``text`` (a ``what`` from the provider), or a :class:`ProviderError`
    naming what was broken."""
    try:
        value = loads(text)
    except ValueError as exc:
        reason = getattr(exc, "msg", exc)
        raise ProviderError(
            f"Provider '{provider_name}' sent a broken {what} ({reason}): {_snippet(text)}"
        ) from exc
    if not isinstance(value, dict):
        raise ProviderError(
            f"Provider '{provider_name}' sent a {what} that is not a JSON object: {_snippet(text)}"
        )
    return value


def _snippet(text: str | bytes) -> str:
    return one_line(text.decode("utf-8", "replace") if isinstance(text, bytes) else text, 80)


def stream_incomplete(provider_name: str, missing: str) -> ProviderError:
    """The error for a stream that ended before its terminal event ``missing``."""
    return ProviderError(
        f"Provider '{provider_name}' ended the stream before {missing}: "
        "the response is incomplete; try again"
    )


def parse_tool_call(call_id: str, name: str, arguments: Any) -> ToolCall:
    """A tool call from its arguments as the provider sent them: a JSON object as is, JSON
    text parsed; anything else (broken JSON, an array, a number) sets ``arguments_error``.

    Empty text means no arguments (``{}``): streams of argument-less calls send none.
    """
    if isinstance(arguments, dict):
        return ToolCall(call_id, name, arguments)
    if not isinstance(arguments, str):
        return ToolCall(call_id, name, None, "arguments are not a JSON object")
    if not arguments.strip():
        return ToolCall(call_id, name, {})
    try:
        value = loads(arguments)
    except ValueError as exc:
        return ToolCall(call_id, name, None, f"arguments are not valid JSON ({exc})")
    if not isinstance(value, dict):
        problem = f"arguments are not a JSON object: {one_line(arguments, 80)}"
        return ToolCall(call_id, name, None, problem)
    return ToolCall(call_id, name, value)


@dataclass
class _CallPieces:
    id: str = ""
    name: str = ""
    text: list[str] = field(default_factory=list)
    whole: Any = None


class TurnBuilder:
    """One assistant turn gathered from a reply or a stream, whatever the provider.

    A provider's parser feeds it what each reply or event holds: text
    (:meth:`add_text`; while streaming, :meth:`deltas` hands it on), tool calls whole or
    in fragments (:meth:`add_call`), the stop reason and the usage fields; its own pieces
    of the turn, to send back unchanged, go in :attr:`parts`. :meth:`message` makes the
    :class:`~ikigai_core.conversation.AssistantMessage`.

    :param usage_keys: where the provider's usage object holds the counts: a
        :class:`~ikigai_core.conversation.UsageKeys`, or the input and output counts' names
        (``("prompt_tokens", "completion_tokens")``).
    """

    def __init__(self, usage_keys: tuple[str, str] | UsageKeys) -> None:
        self.usage_keys = (usage_keys if isinstance(usage_keys, UsageKeys)
                           else UsageKeys(*usage_keys))
        self.parts: dict[int, dict[str, Any]] = {}
        """The provider's own pieces of the turn (blocks, parts) by index, as it sent them."""
        self.stop_reason: str | None = None
        self.usage: dict[str, Any] = {}
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._unsent: list[TextDelta | ThinkingDelta] = []
        self._calls: dict[int, _CallPieces] = {}

    @property
    def text(self) -> str:
        """The turn's text so far."""
        return "".join(self._text)

    @property
    def call_count(self) -> int:
        """How many calls the turn has so far: the index of the next whole call."""
        return len(self._calls)

    @property
    def thinking(self) -> str:
        """The turn's thinking (reasoning summary) so far."""
        return "".join(self._thinking)

    def add_text(self, text: str | None) -> None:
        """Append visible text (nothing when empty or ``None``)."""
        if text:
            self._text.append(text)
            self._unsent.append(TextDelta(text))

    def add_thinking(self, text: str | None) -> None:
        """Append the model's thinking, as the provider shows it (nothing when empty)."""
        if text:
            self._thinking.append(text)
            self._unsent.append(ThinkingDelta(text))

    def deltas(self) -> Iterator[TextDelta | ThinkingDelta]:
        """The text and thinking added since the last call, in order, one delta a piece."""
        unsent, self._unsent = self._unsent, []
        yield from unsent

    def add_call(self, index: int, call_id: str | None = None, name: str | None = None,
                 arguments: Any = "") -> None:
        """A tool call, or one fragment of it: the first id and name given win; argument
        text is appended to the call's (JSON text in pieces); anything else given as
        ``arguments`` (an object, as most replies send it) is the call's arguments."""
        call = self._calls.setdefault(index, _CallPieces())
        call.id = call.id or call_id or ""
        call.name = call.name or name or ""
        if isinstance(arguments, str):
            call.text.append(arguments)
        else:
            call.whole = arguments

    def stop(self, reason: str | None) -> None:
        """The provider's stop reason (the last one given wins)."""
        self.stop_reason = reason or self.stop_reason

    def add_usage(self, fields: Any) -> None:
        """Usage fields from a reply or an event; later counts replace earlier ones."""
        if isinstance(fields, Mapping):
            self.usage.update(fields)

    def call_texts(self) -> list[tuple[str, str, str]]:
        """``(id, name, arguments text)`` of each call in index order, the text as sent."""
        return [(call.id, call.name, "".join(call.text)) for _, call in self._ordered()]

    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The calls in index order (:func:`parse_tool_call` on their arguments)."""
        return tuple(
            parse_tool_call(call.id, call.name,
                            "".join(call.text) if call.whole is None else call.whole)
            for _, call in self._ordered()
        )

    def ordered_parts(self) -> list[dict[str, Any]]:
        """:attr:`parts` in index order."""
        return [self.parts[index] for index in sorted(self.parts)]

    def message(self, raw: Any = None) -> AssistantMessage:
        """The turn, with ``raw`` (the provider's own form of it, when it must go back as
        it came)."""
        return AssistantMessage(text=self.text, tool_calls=self.tool_calls(), raw=raw,
                                stop_reason=self.stop_reason,
                                usage=self.usage_keys.read(self.usage),
                                thinking=self.thinking)

    def _ordered(self) -> list[tuple[int, _CallPieces]]:
        return sorted(self._calls.items())


def stream_error(provider_name: str, event: Mapping[str, Any]) -> ProviderError:
    """The error for an ``error`` event in a stream (``{"error": {"type", "message"}}``)."""
    error = event.get("error")
    if isinstance(error, Mapping):
        kind = error.get("type") or error.get("status")
        message = str(error.get("message") or "no message")
        detail = f"{kind}: {message}" if kind else message
    else:
        detail = str(error or "no message")
    return ProviderError(
        f"Provider '{provider_name}' reported an error mid-stream: {one_line(detail)}; try again"
    )
