"""Scripted provider replies for the fake server, in each provider's own wire format.

``REPLIES["openai"].reply("Hello", stream=True)`` is a :class:`Reply` an OpenAI client
accepts; ``.reply(calls=[("call_1", "bash", {"command": "ls"})])`` asks for tool calls
(arguments may be raw JSON text, to send broken JSON). An agent-loop test pushes one
reply per turn: the tool call first, then the final answer.

Shapes follow each provider's API reference: OpenAI ``chat.completion`` and streamed
``chat.completion.chunk`` objects; Anthropic ``message`` objects and the
``message_start``...``message_stop`` event sequence; Gemini ``GenerateContentResponse``
objects (streamed one per event with ``alt=sse``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_ikigai.fakeserver import Reply, SSEItem, json_reply, sse_reply

Arguments = Mapping[str, Any] | str
Call = tuple[str, str, Arguments]
"""``(id, name, arguments)``; an empty id means "no id" (Gemini may send none)."""


def pieces(text: str, size: int = 4) -> list[str]:
    """``text`` cut into small pieces, as a stream delivers it."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def _json_text(arguments: Arguments) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


class ProviderReplies:
    """What every provider's reply builder offers; subclasses give the shapes."""

    def body(self, text: str = "", calls: Sequence[Call] = ()) -> dict[str, Any]:
        """A non-streamed success body."""
        raise NotImplementedError

    def events(self, text: str = "", calls: Sequence[Call] = ()) -> list[SSEItem]:
        """The same turn as a complete stream of events."""
        raise NotImplementedError

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """The provider's error body."""
        raise NotImplementedError

    def error_event(self, message: str) -> SSEItem:
        """An error reported in the middle of a stream."""
        raise NotImplementedError

    broken_event: SSEItem = "data: {not json\n\n"
    """A stream item that is not JSON."""

    def stream(self, items: Sequence[SSEItem], *, drop: bool = False) -> Reply:
        """A streamed reply of ``items`` in this provider's framing (SSE unless overridden)."""
        return sse_reply(items, drop=drop)

    def reply(self, text: str = "", calls: Sequence[Call] = (), *, stream: bool = False) -> Reply:
        """A successful turn: ``text``, then ``calls``."""
        if stream:
            return self.stream(self.events(text, calls))
        return json_reply(self.body(text, calls))

    def error(self, status: int, message: str, *,
              headers: Mapping[str, str] | None = None) -> Reply:
        """An HTTP error reply."""
        return json_reply(self.error_body(status, message), status=status, headers=headers)


class OpenAIReplies(ProviderReplies):
    """Chat Completions."""

    def _calls(self, calls: Sequence[Call]) -> list[dict[str, Any]]:
        return [{"id": call_id, "type": "function",
                 "function": {"name": name, "arguments": _json_text(arguments)}}
                for call_id, name, arguments in calls]

    def body(self, text: str = "", calls: Sequence[Call] = ()) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": text or None,
                                   "refusal": None, "annotations": []}
        if calls:
            message["tool_calls"] = self._calls(calls)
        return {
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000,
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def _chunk(self, delta: Mapping[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000,
                "model": "gpt-4o-mini",
                "choices": [{"index": 0, "delta": delta, "logprobs": None,
                             "finish_reason": finish}]}

    def events(self, text: str = "", calls: Sequence[Call] = ()) -> list[SSEItem]:
        items: list[SSEItem] = [self._chunk({"role": "assistant", "content": "", "refusal": None})]
        items += [self._chunk({"content": piece}) for piece in pieces(text)]
        for index, (call_id, name, arguments) in enumerate(calls):
            items.append(self._chunk({"tool_calls": [{
                "index": index, "id": call_id, "type": "function",
                "function": {"name": name, "arguments": ""}}]}))
            items += [self._chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]})
                      for p in pieces(_json_text(arguments), 7)]
        items.append(self._chunk({}, "tool_calls" if calls else "stop"))
        items.append({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
                      "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
        items.append("data: [DONE]\n\n")
        return items

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": "invalid_request_error",
                          "param": None, "code": None}}

    def error_event(self, message: str) -> SSEItem:
        return {"error": {"message": message, "type": "server_error", "param": None, "code": None}}


class AnthropicReplies(ProviderReplies):
    """Messages API."""

    def body(self, text: str = "", calls: Sequence[Call] = ()) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}
                    for call_id, name, arguments in calls]
        return {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": content, "stop_reason": "tool_use" if calls else "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
        }

    def events(self, text: str = "", calls: Sequence[Call] = ()) -> list[SSEItem]:
        start = {**self.body(), "stop_reason": None,
                 "usage": {"input_tokens": 10, "output_tokens": 1}}
        items: list[SSEItem] = [("message_start", {"type": "message_start", "message": start})]
        blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        if text:
            blocks.append(({"type": "text", "text": ""},
                           [{"type": "text_delta", "text": p} for p in pieces(text)]))
        for call_id, name, arguments in calls:
            blocks.append(({"type": "tool_use", "id": call_id, "name": name, "input": {}},
                           [{"type": "input_json_delta", "partial_json": p}
                            for p in ["", *pieces(_json_text(arguments), 7)]]))
        for index, (block, deltas) in enumerate(blocks):
            items.append(("content_block_start",
                          {"type": "content_block_start", "index": index, "content_block": block}))
            if index == 0:
                items.append(("ping", {"type": "ping"}))
            items += [("content_block_delta",
                       {"type": "content_block_delta", "index": index, "delta": delta})
                      for delta in deltas]
            items.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        items.append(("message_delta", {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 15}}))
        items.append(("message_stop", {"type": "message_stop"}))
        return items

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = {401: "authentication_error", 404: "not_found_error", 429: "rate_limit_error",
                529: "overloaded_error"}.get(status, "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def error_event(self, message: str) -> SSEItem:
        return ("error", {"type": "error",
                          "error": {"type": "overloaded_error", "message": message}})


class GoogleReplies(ProviderReplies):
    """Gemini ``generateContent`` / ``streamGenerateContent?alt=sse``.

    The first function call carries a ``thoughtSignature``, as thinking models send it.
    """

    signature = "c2lnbmF0dXJlLTE="

    def _call_parts(self, calls: Sequence[Call]) -> list[dict[str, Any]]:
        parts = []
        for index, (call_id, name, arguments) in enumerate(calls):
            call: dict[str, Any] = {"name": name, "args": arguments}
            if call_id:
                call["id"] = call_id
            part: dict[str, Any] = {"functionCall": call}
            if index == 0:
                part["thoughtSignature"] = self.signature
            parts.append(part)
        return parts

    def _response(self, parts: list[dict[str, Any]], finish: str | None) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        return {"candidates": [candidate],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                                  "totalTokenCount": 15},
                "modelVersion": "gemini-2.5-flash", "responseId": "resp-1"}

    def body(self, text: str = "", calls: Sequence[Call] = ()) -> dict[str, Any]:
        parts = ([{"text": text}] if text else []) + self._call_parts(calls)
        return self._response(parts, "STOP")

    def events(self, text: str = "", calls: Sequence[Call] = ()) -> list[SSEItem]:
        chunks = [[{"text": piece}] for piece in pieces(text)]
        if calls:
            chunks.append(self._call_parts(calls))
        chunks = chunks or [[{"text": ""}]]
        return [self._response(parts, "STOP" if last else None)
                for last, parts in ((i == len(chunks) - 1, p) for i, p in enumerate(chunks))]

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                429: "RESOURCE_EXHAUSTED"}.get(status, "INTERNAL")
        return {"error": {"code": status, "message": message, "status": kind}}

    def error_event(self, message: str) -> SSEItem:
        return {"error": {"code": 500, "message": message, "status": "INTERNAL"}}


REPLIES: dict[str, ProviderReplies] = {
    "openai": OpenAIReplies(), "anthropic": AnthropicReplies(), "google": GoogleReplies(),
}
"""Reply builders by provider name."""
