"""The OpenAI Chat Completions (and compatible servers) serializer: schema transformation
and wire format."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ikigai_core.providers import ProviderRequest
from ikigai_core.wire import SerializerDefaults, base_url
from ikigai_provider_openai import chat
from ikigai_provider_openai.strict import drop_nulls, strict_parameters

if TYPE_CHECKING:
    from ikigai_core.conversation import Conversation
    from ikigai_core.tools import Tool

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAISerializer(SerializerDefaults):
    """``POST {OPENAI_BASE_URL}/chat/completions`` with ``Authorization: Bearer``."""

    name = chat.NAME
    default_model = "gpt-4o-mini"
    api_key_env = ("OPENAI_API_KEY",)
    base_url_env = "OPENAI_BASE_URL"

    def tool_schema(self, tool: Tool) -> dict[str, Any]:
        """A ``function`` tool, strict when its parameters can be (spec decision 15)."""
        strict = strict_parameters(tool.parameters)
        return {"type": "function", "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": dict(tool.parameters) if strict is None else strict,
            "strict": strict is not None,
        }}

    def request_body(
        self, conversation: Conversation, tools: Sequence[Tool], *, model: str, stream: bool
    ) -> dict[str, Any]:
        """``model``, ``messages``, ``tools`` (left out when there are none: OpenAI
        rejects an empty list), and the streaming switches."""
        body: dict[str, Any] = {"model": model, "messages": chat.to_messages(conversation)}
        if tools:
            body["tools"] = [self.tool_schema(tool) for tool in tools]
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def http_request(
        self, body: Mapping[str, Any], *, model: str, stream: bool, api_key: str,
        environ: Mapping[str, str],
    ) -> ProviderRequest:
        """The request to ``{base}/chat/completions``."""
        url = base_url(environ, self.base_url_env, DEFAULT_BASE_URL) + "/chat/completions"
        headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
        if stream:
            headers["Accept"] = "text/event-stream"
        return ProviderRequest(url, headers, body)

    parse_response = staticmethod(chat.parse_response)
    parse_stream = staticmethod(chat.parse_stream)

    def prepare_arguments(self, tool: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Drop the nulls strict mode made the model send for optional properties."""
        return drop_nulls(tool.parameters, arguments)
