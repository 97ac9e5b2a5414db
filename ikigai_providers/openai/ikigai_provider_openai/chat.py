"""The Chat Completions wire format: conversation to ``messages``, responses to turns.

Shapes from OpenAI's API reference (chat/create, the ``chat.completion`` object and
streamed ``chat.completion.chunk`` objects ending with ``data: [DONE]``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ikigai_core.conversation import (
    AssistantMessage,
    Conversation,
    TextDelta,
    ToolResultsMessage,
    Usage,
    UserMessage,
)
from ikigai_core.sse import ServerSentEvent
from ikigai_core.wire import load_object, parse_tool_call, stream_error, stream_incomplete


def to_messages(conversation: Conversation) -> list[dict[str, Any]]:
    """``messages``: system, user, assistant (with ``tool_calls``), one ``tool`` per result.

    An assistant turn with neither text nor calls is left out (OpenAI rejects it).
    """
    messages: list[dict[str, Any]] = []
    if conversation.system:
        messages.append({"role": "system", "content": conversation.system})
    for message in conversation.messages:
        if isinstance(message, UserMessage):
            messages.append({"role": "user", "content": message.text})
        elif isinstance(message, ToolResultsMessage):
            messages.extend(
                {"role": "tool", "tool_call_id": result.call.id,
                 "content": json.dumps(result.envelope)}
                for result in message.results
            )
        elif not (message.text or message.tool_calls):
            continue
        elif isinstance(message.raw, Mapping):
            messages.append(dict(message.raw))  # as the model sent it (argument text unchanged)
        else:
            messages.append(assistant_message(
                message.text or None,
                [(call.id, call.name, json.dumps(call.arguments or {}))
                 for call in message.tool_calls],
            ))
    return messages


def assistant_message(content: str | None, calls: list[tuple[str, str, str]]) -> dict[str, Any]:
    """An assistant message in request form; ``calls`` are ``(id, name, arguments text)``."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
            for call_id, name, arguments in calls
        ]
    return message


def _turn(
    content: str | None, calls: list[tuple[str, str, str]], stop: str | None, usage: Any
) -> AssistantMessage:
    return AssistantMessage(
        text=content or "",
        tool_calls=tuple(parse_tool_call(*call) for call in calls),
        raw=assistant_message(content, calls),
        stop_reason=stop,
        usage=Usage.read(usage, "prompt_tokens", "completion_tokens"),
    )


def parse_response(body: Mapping[str, Any]) -> AssistantMessage:
    """A ``chat.completion`` object: the first choice's message."""
    choice = body["choices"][0]
    message = choice["message"]
    calls = [
        (call["id"], call["function"]["name"], call["function"].get("arguments") or "")
        for call in message.get("tool_calls") or ()
    ]
    content = message.get("content") or message.get("refusal")
    return _turn(content, calls, choice.get("finish_reason"), body.get("usage"))


def parse_stream(
    events: Iterable[ServerSentEvent], name: str
) -> Iterator[TextDelta | AssistantMessage]:
    """``chat.completion.chunk`` events: text deltas, tool calls in pieces by ``index``."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish = usage = None
    for event in events:
        if event.data.strip() == "[DONE]":
            ordered = [calls[index] for index in sorted(calls)]
            yield _turn(
                "".join(text) or None,
                [(c["id"], c["name"], "".join(c["arguments"])) for c in ordered],
                finish, usage,
            )
            return
        chunk = load_object(name, event.data)
        if "error" in chunk:
            raise stream_error(name, chunk)
        usage = chunk.get("usage") or usage  # the last chunk, with include_usage
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            if delta.get("content"):
                text.append(delta["content"])
                yield TextDelta(delta["content"])
            for piece in delta.get("tool_calls") or ():
                _add_piece(calls, piece)
            finish = choice.get("finish_reason") or finish
    raise stream_incomplete(name, "data: [DONE]")


def _add_piece(calls: dict[int, dict[str, Any]], piece: Mapping[str, Any]) -> None:
    """The first piece of a call brings its id and name; later ones more argument text."""
    call = calls.setdefault(piece.get("index", 0), {"id": "", "name": "", "arguments": []})
    function = piece.get("function") or {}
    call["id"] = call["id"] or piece.get("id") or ""
    call["name"] = call["name"] or function.get("name") or ""
    if function.get("arguments"):
        call["arguments"].append(function["arguments"])

