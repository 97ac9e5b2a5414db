"""Ollama's native chat API on ikigai's :class:`~ikigai_core.Provider` base class.

``POST {OLLAMA_HOST}/api/chat``; a streamed answer is newline-delimited JSON, one
``{"message": {...}, "done": false}`` object per line and ``"done": true`` last (a
reply that is not streamed is that last line, whole). The base class does the URL, the
optional key, the headers, the error lines, the framing, the walk through the
conversation and the gathering of the turn: what is left is this API's own shapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ikigai_core import (
    AssistantMessage,
    Conversation,
    Provider,
    Tool,
    ToolResult,
    TurnBuilder,
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
    stream_end = 'a line with "done": true'
    usage_keys = ("prompt_eval_count", "eval_count")
    system_role = "system"

    def tool_schema(self, tool: Tool) -> dict[str, Any]:
        """A ``function`` tool, the parameters unchanged."""
        return {"type": "function", "function": {
            "name": tool.name, "description": tool.description,
            "parameters": dict(tool.parameters)}}

    def request_body(
        self, conversation: Conversation, tools: Sequence[Tool], *, model: str, stream: bool
    ) -> dict[str, Any]:
        """``model``, ``messages``, ``tools`` and ``stream`` (Ollama streams unless told)."""
        return {"model": model, "messages": self.wire_messages(conversation),
                "tools": self.declarations(tools), "stream": stream}

    def result_entries(self, results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        return [{"role": "tool", "tool_name": result.call.name, "content": result.envelope_json}
                for result in results]

    def assistant_entry(self, message: AssistantMessage) -> dict[str, Any]:
        return {"role": "assistant", "content": message.text, "tool_calls": [
            {"id": call.id, "function": {"name": call.name, "arguments": call.arguments_or_empty}}
            for call in message.tool_calls]}

    def read_event(self, data: dict[str, Any], turn: TurnBuilder) -> bool:
        """One line: its text, its whole calls (made-up ids when Ollama sends none), and on
        the last line the stop reason and the usage."""
        message = data.get("message") or {}
        turn.add_text(message.get("content"))
        for call in message.get("tool_calls") or ():
            index = turn.call_count
            function = call["function"]
            turn.add_call(index, call.get("id") or f"call_{index}", function["name"],
                          function.get("arguments", {}))
        if data.get("done"):
            turn.stop(data.get("done_reason"))
            turn.add_usage(data)
        return bool(data.get("done"))
