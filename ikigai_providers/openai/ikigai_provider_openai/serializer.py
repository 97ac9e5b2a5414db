"""The OpenAI Chat Completions (and compatible servers) provider: schema transformation
and wire format."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ikigai_core.providers import Provider, ToolFit
from ikigai_core.schema_top import one_object
from ikigai_provider_openai import chat, rules
from ikigai_provider_openai.strict import (
    STRICT_FORM,
    NotStrict,
    drop_nulls,
    loose_parameters,
    strict_parameters,
)

if TYPE_CHECKING:
    from ikigai_core.conversation import AssistantMessage, Conversation, TextDelta
    from ikigai_core.sse import ServerSentEvent
    from ikigai_core.tools import Tool


class OpenAISerializer(Provider):
    """``POST {OPENAI_BASE_URL}/chat/completions`` with ``Authorization: Bearer``; with
    ``OPENAI_BASE_URL`` set (llama.cpp, vLLM, Ollama, LM Studio) the key is optional."""

    name = "openai"
    default_model = "gpt-4o-mini"
    api_key_env = ("OPENAI_API_KEY",)
    base_url_env = "OPENAI_BASE_URL"
    default_base_url = "https://api.openai.com/v1"
    path = "/chat/completions"

    def fit_tool(self, tool: Tool) -> ToolFit:
        """A ``function`` tool, strict when its parameters can be (spec decision 15), else
        ``strict: false``; left out if the API would still reject it (``rules.py``)."""
        top, changes = one_object(tool.parameters)
        try:
            converted = strict_parameters(top)
        except NotStrict as exc:
            parameters, loose = loose_parameters(top)
            changes = [f"sent with strict: false: {exc}", *changes, *loose]
            strict = False
        else:
            parameters, strict = converted.schema, True
            changes = [*([STRICT_FORM] if parameters != tool.parameters else []), *changes,
                       *converted.changes]
        declaration = {"type": "function", "function": {
            "name": tool.name, "description": tool.description,
            "parameters": parameters, "strict": strict,
        }}
        return ToolFit.checked(tool.name, declaration, changes, rules.problems(declaration))

    def request_body(
        self, conversation: Conversation, tools: Sequence[Tool], *, model: str, stream: bool
    ) -> dict[str, Any]:
        """``model``, ``messages``, ``tools`` (left out when there are none: OpenAI
        rejects an empty list), and the streaming switches."""
        body: dict[str, Any] = {"model": model, "messages": chat.to_messages(conversation)}
        sent = self.declarations(tools)
        if sent:
            body["tools"] = sent
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def parse_response(self, body: Mapping[str, Any]) -> AssistantMessage:
        """A ``chat.completion`` object."""
        return chat.parse_response(body)

    def parse_stream(
        self, events: Iterable[ServerSentEvent]
    ) -> Iterator[TextDelta | AssistantMessage]:
        """``chat.completion.chunk`` events ending with ``data: [DONE]``."""
        return chat.parse_stream(events, self.name)

    def prepare_arguments(self, tool: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Drop the nulls strict mode made the model send for optional properties."""
        return drop_nulls(one_object(tool.parameters)[0], arguments)
