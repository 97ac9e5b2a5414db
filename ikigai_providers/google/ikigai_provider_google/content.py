"""The Gemini wire format: conversation to ``contents``, responses to turns.

Shapes from the Gemini API reference (``GenerateContentResponse``: ``candidates`` with
``content.parts`` holding ``text``, ``functionCall`` and ``thoughtSignature``;
``functionResponse`` parts; ``streamGenerateContent?alt=sse`` sends one response per
event) and the thought-signatures guide (send the model's turn back unchanged).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ikigai_core.conversation import (
    AssistantMessage,
    Conversation,
    TextDelta,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    Usage,
    UserMessage,
)
from ikigai_core.errors import ProviderError
from ikigai_core.sse import ServerSentEvent
from ikigai_core.wire import load_object, stream_error, stream_incomplete

SYNTHETIC_ID = "gemini-call-"
"""Prefix of the ids ikigai makes up for calls Gemini sent without one (never sent back)."""


def to_contents(conversation: Conversation) -> list[dict[str, Any]]:
    """``contents``: user text, the model's turns as sent, ``functionResponse`` parts.

    A model turn with neither text nor calls is left out (Gemini rejects empty parts).
    """
    contents: list[dict[str, Any]] = []
    for message in conversation.messages:
        if isinstance(message, UserMessage):
            contents.append({"role": "user", "parts": [{"text": message.text}]})
        elif isinstance(message, ToolResultsMessage):
            contents.append({"role": "user",
                             "parts": [_function_response(result) for result in message.results]})
        elif not (message.text or message.tool_calls):
            continue
        elif isinstance(message.raw, Mapping):
            contents.append(dict(message.raw))  # unchanged: thoughtSignature must go back
        else:
            contents.append({"role": "model", "parts": _model_parts(message)})
    return contents


def _with_real_id(call: ToolCall, fields: dict[str, Any]) -> dict[str, Any]:
    if not call.id.startswith(SYNTHETIC_ID):
        fields["id"] = call.id
    return fields


def _function_response(result: ToolResult) -> dict[str, Any]:
    return {"functionResponse": _with_real_id(
        result.call, {"name": result.call.name, "response": dict(result.envelope)}
    )}


def _model_parts(message: AssistantMessage) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"text": message.text}] if message.text else []
    parts += [{"functionCall": _with_real_id(call, {"name": call.name,
                                                    "args": dict(call.arguments or {})})}
              for call in message.tool_calls]
    return parts


def _turn(parts: list[dict[str, Any]], finish: str | None, usage: Any) -> AssistantMessage:
    """Text from the visible text parts; calls from the ``functionCall`` parts (Gemini's
    ``finishReason`` is ``STOP`` with or without calls)."""
    text = "".join(part["text"] for part in parts if "text" in part and not part.get("thought"))
    calls = tuple(
        _call(index, part["functionCall"])
        for index, part in enumerate(p for p in parts if "functionCall" in p)
    )
    raw = {"role": "model", "parts": parts} if parts else None
    return AssistantMessage(text=text, tool_calls=calls, raw=raw, stop_reason=finish,
                            usage=Usage.read(usage, "promptTokenCount", "candidatesTokenCount"))


def _call(index: int, call: Mapping[str, Any]) -> ToolCall:
    call_id = call.get("id") or SYNTHETIC_ID + f"{index}-" + hashlib.sha256(
        json.dumps(call, sort_keys=True).encode()
    ).hexdigest()[:12]
    args = call.get("args", {})
    if not isinstance(args, dict):
        return ToolCall(call_id, call["name"], None, "arguments are not a JSON object")
    return ToolCall(call_id, call["name"], args)


def _no_candidates(body: Mapping[str, Any], name: str) -> ProviderError:
    reason = (body.get("promptFeedback") or {}).get("blockReason")
    because = f": the prompt was blocked ({reason})" if reason else ""
    return ProviderError(f"Provider '{name}' returned no answer{because}")


def parse_response(body: Mapping[str, Any], name: str) -> AssistantMessage:
    """A ``GenerateContentResponse``: the first candidate's parts."""
    if not body.get("candidates"):
        raise _no_candidates(body, name)
    candidate = body["candidates"][0]
    parts = [dict(part) for part in (candidate.get("content") or {}).get("parts") or ()]
    return _turn(parts, candidate.get("finishReason"), body.get("usageMetadata"))


def parse_stream(
    events: Iterable[ServerSentEvent], name: str
) -> Iterator[TextDelta | AssistantMessage]:
    """One response per event: text parts are deltas; the stream ends after a
    ``finishReason``."""
    parts: list[dict[str, Any]] = []
    finish = usage = None
    for event in events:
        chunk = load_object(name, event.data)
        if "error" in chunk:
            raise stream_error(name, chunk)
        usage = chunk.get("usageMetadata") or usage  # cumulative: the last one counts
        if not chunk.get("candidates"):
            if (chunk.get("promptFeedback") or {}).get("blockReason"):
                raise _no_candidates(chunk, name)
            continue
        candidate = chunk["candidates"][0]
        for part in (candidate.get("content") or {}).get("parts") or ():
            parts.append(dict(part))
            if part.get("text") and not part.get("thought"):
                yield TextDelta(part["text"])
        finish = candidate.get("finishReason") or finish
    if finish is None:
        raise stream_incomplete(name, "a finishReason")
    yield _turn(parts, finish, usage)
