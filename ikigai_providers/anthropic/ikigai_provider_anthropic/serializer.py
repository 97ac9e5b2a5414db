"""The Anthropic Messages provider: schema transformation and wire format."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ikigai_core.providers import Provider, ToolFit
from ikigai_core.schema_top import one_object
from ikigai_provider_anthropic import messages, rules

if TYPE_CHECKING:
    from ikigai_core.conversation import AssistantMessage, Conversation, TextDelta
    from ikigai_core.sse import ServerSentEvent
    from ikigai_core.tools import Tool

MAX_TOKENS = 8192
"""``max_tokens`` is required by the Messages API."""


class AnthropicSerializer(Provider):
    """``POST {ANTHROPIC_BASE_URL}/v1/messages`` with ``x-api-key``."""

    name = "anthropic"
    default_model = "claude-sonnet-4-5"
    api_key_env = ("ANTHROPIC_API_KEY",)
    base_url_env = "ANTHROPIC_BASE_URL"
    default_base_url = "https://api.anthropic.com"
    path = "/v1/messages"
    auth_header, auth_prefix = "x-api-key", ""
    headers = {"anthropic-version": "2023-06-01"}

    def fit_tool(self, tool: Tool) -> ToolFit:
        """``{name, description, input_schema}``, the schema unchanged (spec decision 16) but
        for a top level that is not one object; left out if the API would still reject it
        (``rules.py``)."""
        schema, changes = one_object(tool.parameters)
        declaration = {"name": tool.name, "description": tool.description, "input_schema": schema}
        return ToolFit.checked(tool.name, declaration, changes, rules.problems(declaration))

    def request_body(
        self, conversation: Conversation, tools: Sequence[Tool], *, model: str, stream: bool
    ) -> dict[str, Any]:
        """``model``, ``max_tokens``, top-level ``system``, ``messages``, ``tools``."""
        body: dict[str, Any] = {"model": model, "max_tokens": MAX_TOKENS}
        if conversation.system:
            body["system"] = conversation.system
        body["messages"] = messages.to_messages(conversation)
        sent = self.declarations(tools)
        if sent:
            body["tools"] = sent
        if stream:
            body["stream"] = True
        return body

    def parse_response(self, body: Mapping[str, Any]) -> AssistantMessage:
        """A ``message`` object."""
        return messages.parse_response(body)

    def parse_stream(
        self, events: Iterable[ServerSentEvent]
    ) -> Iterator[TextDelta | AssistantMessage]:
        """``message_start`` ... ``message_stop``."""
        return messages.parse_stream(events, self.name)
