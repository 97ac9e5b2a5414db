"""The Google Gemini serializer: schema transformation and wire format."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence
from urllib.parse import quote

from ikigai_core.providers import ProviderRequest
from ikigai_core.wire import SerializerDefaults, base_url, http_error_message
from ikigai_provider_google import content
from ikigai_provider_google.schema import gemini_parameters

if TYPE_CHECKING:
    from ikigai_core.conversation import Conversation
    from ikigai_core.tools import Tool

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"


class GoogleSerializer(SerializerDefaults):
    """``POST {GOOGLE_GEMINI_BASE_URL}/v1beta/models/{model}:generateContent``
    (``:streamGenerateContent?alt=sse``) with ``x-goog-api-key``."""

    name = content.NAME
    default_model = "gemini-2.5-flash"
    api_key_env = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
    base_url_env = "GOOGLE_GEMINI_BASE_URL"

    def tool_schema(self, tool: Tool) -> dict[str, Any]:
        """A ``functionDeclaration`` with the parameters in Gemini's schema subset."""
        declaration: dict[str, Any] = {"name": tool.name, "description": tool.description}
        parameters = gemini_parameters(tool.parameters)
        if parameters is not None:
            declaration["parameters"] = parameters
        return declaration

    def request_body(
        self, conversation: Conversation, tools: Sequence[Tool], *, model: str, stream: bool
    ) -> dict[str, Any]:
        """``contents``, ``systemInstruction``, ``tools: [{functionDeclarations}]``; the
        model and streaming are in the URL."""
        body: dict[str, Any] = {"contents": content.to_contents(conversation)}
        if conversation.system:
            body["systemInstruction"] = {"parts": [{"text": conversation.system}]}
        if tools:
            body["tools"] = [{"functionDeclarations": [self.tool_schema(t) for t in tools]}]
        return body

    def http_request(
        self, body: Mapping[str, Any], *, model: str, stream: bool, api_key: str,
        environ: Mapping[str, str],
    ) -> ProviderRequest:
        """The request to the model's ``generateContent`` method."""
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        name = quote(model.removeprefix("models/"), safe="")
        base = base_url(environ, self.base_url_env, DEFAULT_BASE_URL)
        url = f"{base}/v1beta/models/{name}:{method}"
        headers = {"x-goog-api-key": api_key, "Content-Type": "application/json"}
        return ProviderRequest(url, headers, body)

    parse_response = staticmethod(content.parse_response)
    parse_stream = staticmethod(content.parse_stream)

    def error_message(self, status: int, body: bytes, *, model: str, key_env: str) -> str:
        """The standard one line; Gemini answers a bad key with 400 ``API_KEY_INVALID``."""
        return http_error_message(
            self, status, body, model=model, key_env=key_env,
            key_rejected=status == 400 and b"API_KEY_INVALID" in body,
        )
