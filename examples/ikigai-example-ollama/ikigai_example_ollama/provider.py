"""Ollama's native chat API on ikigai's :class:`~ikigai_core.Provider` base class.

``POST {OLLAMA_HOST}/api/chat``; a streamed answer is newline-delimited JSON, one
``{"message": {...}, "done": false}`` object per line and ``"done": true`` last. The
base class does the URL, the optional key, the headers, the error lines and the framing:
what is left is this API's own shapes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ikigai_core import (
    AssistantMessage,
    Conversation,
    Provider,
    ServerSentEvent,
    TextDelta,
    Tool,
    ToolCall,
    ToolResultsMessage,
    Usage,
    UserMessage,
    load_object,
    parse_tool_call,
    stream_error,
    stream_incomplete,
)


class OllamaProvider(Provider):
    """A local server needs no key; ``OLLAMA_API_KEY`` is sent as a bearer token when set."""

    name = "ollama"
    default_model = "llama3.2"
    base_url_env = "OLLAMA_HOST"
    default_base_url = "http://127.0.0.1:11434"
    path = "/api/chat"
    api_key_env = ("OLLAMA_API_KEY",)
    key_required = False
    stream_framing = "ndjson"

    def tool_schema(self, tool: Tool) -> dict[str, Any]:
        """A ``function`` tool, the parameters unchanged."""
        return {"type": "function", "function": {
            "name": tool.name, "description": tool.description,
            "parameters": dict(tool.parameters)}}

    def request_body(
        self, conversation: Conversation, tools: Sequence[Tool], *, model: str, stream: bool
    ) -> dict[str, Any]:
        """``model``, ``messages``, ``tools`` and ``stream`` (Ollama streams unless told)."""
        messages: list[dict[str, Any]] = []
        if conversation.system:
            messages.append({"role": "system", "content": conversation.system})
        for message in conversation.messages:
            if isinstance(message, UserMessage):
                messages.append({"role": "user", "content": message.text})
            elif isinstance(message, ToolResultsMessage):
                messages += [{"role": "tool", "tool_name": result.call.name,
                              "content": json.dumps(result.envelope)} for result in message.results]
            else:
                messages.append({"role": "assistant", "content": message.text, "tool_calls": [
                    {"id": call.id, "function": {"name": call.name, "arguments": call.arguments}}
                    for call in message.tool_calls]})
        return {"model": model, "messages": messages,
                "tools": [self.tool_schema(tool) for tool in tools], "stream": stream}

    def parse_response(self, body: Mapping[str, Any]) -> AssistantMessage:
        """One object with ``done: true``: its whole ``message``."""
        message = body["message"]
        calls = [_call(index, call) for index, call in enumerate(message.get("tool_calls") or ())]
        return AssistantMessage(message.get("content") or "", tuple(calls),
                                stop_reason=body.get("done_reason"),
                                usage=Usage.read(body, "prompt_eval_count", "eval_count"))

    def parse_stream(
        self, events: Iterable[ServerSentEvent]
    ) -> Iterator[TextDelta | AssistantMessage]:
        """Text as each line brings it; the calls and the stop reason gathered to the end."""
        text: list[str] = []
        calls: list[Mapping[str, Any]] = []
        for event in events:
            chunk = load_object(self.name, event.data)
            if "error" in chunk:
                raise stream_error(self.name, chunk)
            message = chunk.get("message") or {}
            if message.get("content"):
                text.append(message["content"])
                yield TextDelta(message["content"])
            calls += message.get("tool_calls") or ()
            if chunk.get("done"):
                yield self.parse_response({**chunk, "message": {
                    "content": "".join(text), "tool_calls": calls}})
                return
        raise stream_incomplete(self.name, 'a line with "done": true')


def _call(index: int, call: Mapping[str, Any]) -> ToolCall:
    """Ollama sends arguments as an object and may send no id (one is made up)."""
    function = call["function"]
    call_id, arguments = call.get("id") or f"call_{index}", function.get("arguments", {})
    if isinstance(arguments, str):
        return parse_tool_call(call_id, function["name"], arguments)
    if not isinstance(arguments, dict):
        return ToolCall(call_id, function["name"], None, "arguments are not a JSON object")
    return ToolCall(call_id, function["name"], arguments)
