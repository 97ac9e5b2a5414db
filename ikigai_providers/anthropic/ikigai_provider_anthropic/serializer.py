"""The Anthropic Messages serializer: schema transformation and wire format."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ikigai_core.providers import ProviderRequest
from ikigai_core.wire import SerializerDefaults, base_url
from ikigai_provider_anthropic import messages

if TYPE_CHECKING:
    from ikigai_core.conversation import Conversation
    from ikigai_core.tools import Tool

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
MAX_TOKENS = 8192
"""``max_tokens`` is required by the Messages API."""


class AnthropicSerializer(SerializerDefaults):
    """``POST {ANTHROPIC_BASE_URL}/v1/messages`` with ``x-api-key``."""

    name = messages.NAME
    default_model = "claude-sonnet-4-5"
    api_key_env = ("ANTHROPIC_API_KEY",)
    base_url_env = "ANTHROPIC_BASE_URL"

    def tool_schema(self, tool: Tool) -> dict[str, Any]:
        """``{name, description, input_schema}``, the schema unchanged (spec decision 16)."""
        return {"name": tool.name, "description": tool.description,
                "input_schema": dict(tool.parameters)}

    def request_body(
        self, conversation: Conversation, tools: Sequence[Tool], *, model: str, stream: bool
    ) -> dict[str, Any]:
        """``model``, ``max_tokens``, top-level ``system``, ``messages``, ``tools``."""
        body: dict[str, Any] = {"model": model, "max_tokens": MAX_TOKENS}
        if conversation.system:
            body["system"] = conversation.system
        body["messages"] = messages.to_messages(conversation)
        if tools:
            body["tools"] = [self.tool_schema(tool) for tool in tools]
        if stream:
            body["stream"] = True
        return body

    def http_request(
        self, body: Mapping[str, Any], *, model: str, stream: bool, api_key: str,
        environ: Mapping[str, str],
    ) -> ProviderRequest:
        """The request to ``{base}/v1/messages``."""
        url = base_url(environ, self.base_url_env, DEFAULT_BASE_URL) + "/v1/messages"
        headers = {"x-api-key": api_key, "anthropic-version": API_VERSION,
                   "content-type": "application/json"}
        return ProviderRequest(url, headers, body)

    parse_response = staticmethod(messages.parse_response)
    parse_stream = staticmethod(messages.parse_stream)
