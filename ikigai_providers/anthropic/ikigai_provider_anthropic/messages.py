"""The Messages API wire format: conversation to ``messages``, responses to turns.

Shapes from Anthropic's API reference (the ``message`` object, content blocks ``text``
and ``tool_use``, ``tool_result`` blocks) and its streaming guide (``message_start``,
``content_block_start/delta/stop``, ``message_delta``, ``message_stop``, ``ping``,
``error``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ikigai_core.conversation import (
    AssistantMessage,
    Conversation,
    TextDelta,
    ToolCall,
    ToolResultsMessage,
    Usage,
    UserMessage,
)
from ikigai_core.sse import ServerSentEvent
from ikigai_core.wire import load_object, parse_tool_call, stream_error, stream_incomplete


def to_messages(conversation: Conversation) -> list[dict[str, Any]]:
    """``messages``: text as blocks, ``tool_use`` blocks, then one user message holding
    every ``tool_result`` first (a user text that follows joins it, after the results).

    An assistant turn with neither text nor calls is left out (Anthropic rejects empty
    content)."""
    messages: list[dict[str, Any]] = []
    for message in conversation.messages:
        if isinstance(message, UserMessage):
            _add(messages, "user", [{"type": "text", "text": message.text}])
        elif isinstance(message, ToolResultsMessage):
            _add(messages, "user", [_result_block(result.call, result.envelope, result.is_error)
                                    for result in message.results])
        elif message.text or message.tool_calls:
            _add(messages, "assistant", _assistant_blocks(message))
    return messages


def _add(messages: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    if messages and messages[-1]["role"] == role:
        messages[-1]["content"].extend(blocks)
    else:
        messages.append({"role": role, "content": blocks})


def _result_block(call: ToolCall, envelope: Mapping[str, Any], is_error: bool) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_result", "tool_use_id": call.id, "content": json.dumps(envelope)
    }
    if is_error:
        block["is_error"] = True
    return block


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    if isinstance(message.raw, list):
        return [dict(block) for block in message.raw]  # as the model sent them
    blocks: list[dict[str, Any]] = [{"type": "text", "text": message.text}] if message.text else []
    blocks += [{"type": "tool_use", "id": call.id, "name": call.name,
                "input": dict(call.arguments or {})} for call in message.tool_calls]
    return blocks


def _turn(
    blocks: list[dict[str, Any]], calls: list[ToolCall], stop: str | None, usage: Any
) -> AssistantMessage:
    text = "".join(block["text"] for block in blocks if block.get("type") == "text")
    return AssistantMessage(text=text, tool_calls=tuple(calls), raw=blocks, stop_reason=stop,
                            usage=Usage.read(usage, "input_tokens", "output_tokens"))


def parse_response(body: Mapping[str, Any]) -> AssistantMessage:
    """A ``message`` object: its ``text`` and ``tool_use`` blocks, in order."""
    blocks = [dict(block) for block in body["content"]]
    calls = [_call(block, block["input"]) for block in blocks if block["type"] == "tool_use"]
    return _turn(blocks, calls, body.get("stop_reason"), body.get("usage"))


def _call(block: Mapping[str, Any], arguments: Any) -> ToolCall:
    if isinstance(arguments, str):
        return parse_tool_call(block["id"], block["name"], arguments)
    if isinstance(arguments, dict):
        return ToolCall(block["id"], block["name"], arguments)
    return ToolCall(block["id"], block["name"], None, "arguments are not a JSON object")


def parse_stream(
    events: Iterable[ServerSentEvent], name: str
) -> Iterator[TextDelta | AssistantMessage]:
    """Streamed events: text deltas as they come, ``tool_use`` input gathered per block."""
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, list[str]] = {}
    stop = None
    usage: dict[str, Any] = {}  # input tokens at message_start, output at each message_delta
    for event in events:
        data = load_object(name, event.data)
        kind = data.get("type", event.event)
        if kind == "error":
            raise stream_error(name, data)
        if kind == "message_start":
            usage.update((data.get("message") or {}).get("usage") or {})
        elif kind == "content_block_start":
            blocks[data["index"]] = dict(data["content_block"])
            partial[data["index"]] = []
        elif kind == "content_block_delta":
            text = _apply_delta(blocks[data["index"]], partial[data["index"]], data["delta"])
            if text:
                yield TextDelta(text)
        elif kind == "message_delta":
            stop = data.get("delta", {}).get("stop_reason") or stop
            usage.update(data.get("usage") or {})
        elif kind == "message_stop":
            ordered = [blocks[index] for index in sorted(blocks)]
            calls = [_finish_tool_use(blocks[index], partial[index])
                     for index in sorted(blocks) if blocks[index].get("type") == "tool_use"]
            yield _turn(ordered, calls, stop, usage)
            return
    raise stream_incomplete(name, "message_stop")


def _apply_delta(block: dict[str, Any], partial: list[str], delta: Mapping[str, Any]) -> str:
    """Grow ``block`` by one delta; returns new visible text (``text_delta``), if any."""
    kind = delta.get("type")
    if kind == "text_delta":
        text: str = delta["text"]
        block["text"] = block.get("text", "") + text
        return text
    if kind == "input_json_delta":
        partial.append(delta["partial_json"])
    elif kind == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + delta["thinking"]
    elif kind == "signature_delta":
        block["signature"] = delta["signature"]
    return ""


def _finish_tool_use(block: dict[str, Any], partial: list[str]) -> ToolCall:
    call = parse_tool_call(block["id"], block["name"], "".join(partial))
    block["input"] = dict(call.arguments or {})
    return call
