"""The Google Gemini provider: schema transformation and wire format."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ikigai_core.providers import Provider, ProviderRequest, ToolFit
from ikigai_core.wire import http_error_message
from ikigai_provider_google import content, rules
from ikigai_provider_google.schema import Unfit, gemini_parameters

if TYPE_CHECKING:
    from ikigai_core.conversation import AssistantMessage, Conversation, TextDelta
    from ikigai_core.sse import ServerSentEvent
    from ikigai_core.tools import Tool


class GoogleSerializer(Provider):
    """``POST {GOOGLE_GEMINI_BASE_URL}/v1beta/models/{model}:generateContent``
    (``:streamGenerateContent?alt=sse``) with ``x-goog-api-key``."""

    name = "google"
    default_model = "gemini-2.5-flash"
    api_key_env = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
    base_url_env = "GOOGLE_GEMINI_BASE_URL"
    default_base_url = "https://generativelanguage.googleapis.com"
    path = "/v1beta/models/{model}:generateContent"
    stream_path = "/v1beta/models/{model}:streamGenerateContent?alt=sse"
    auth_header, auth_prefix = "x-goog-api-key", ""

    def fit_tool(self, tool: Tool) -> ToolFit:
        """A ``functionDeclaration`` with the parameters in Gemini's schema subset
        (``schema.py``); left out if the API would still reject it (``rules.py``)."""
        declaration: dict[str, Any] = {"name": tool.name, "description": tool.description}
        try:
            parameters, changes = gemini_parameters(tool.parameters)
        except Unfit as exc:
            return ToolFit(tool.name, None, reason=str(exc))
        if parameters is not None:
            declaration["parameters"] = parameters
        return ToolFit.checked(tool.name, declaration, changes, rules.problems(declaration))

    def request_body(
        self, conversation: Conversation, tools: Sequence[Tool], *, model: str, stream: bool
    ) -> dict[str, Any]:
        """``contents``, ``systemInstruction``, ``tools: [{functionDeclarations}]``; the
        model and streaming are in the URL."""
        body: dict[str, Any] = {"contents": content.to_contents(conversation)}
        if conversation.system:
            body["systemInstruction"] = {"parts": [{"text": conversation.system}]}
        sent = self.declarations(tools)
        if sent:
            body["tools"] = [{"functionDeclarations": sent}]
        return body

    def http_request(
        self, body: Mapping[str, Any], *, model: str, stream: bool, api_key: str | None,
        environ: Mapping[str, str],
    ) -> ProviderRequest:
        """The standard request; a model may be named ``models/NAME``, as Gemini lists them."""
        return super().http_request(body, model=model.removeprefix("models/"), stream=stream,
                                    api_key=api_key, environ=environ)

    def parse_response(self, body: Mapping[str, Any]) -> AssistantMessage:
        """A ``GenerateContentResponse``."""
        return content.parse_response(body, self.name)

    def parse_stream(
        self, events: Iterable[ServerSentEvent]
    ) -> Iterator[TextDelta | AssistantMessage]:
        """One ``GenerateContentResponse`` per event, until a ``finishReason``."""
        return content.parse_stream(events, self.name)

    def error_message(self, status: int, body: bytes, *, model: str, key_env: str | None) -> str:
        """The standard one line; Gemini answers a bad key with 400 ``API_KEY_INVALID``."""
        return http_error_message(
            self, status, body, model=model, key_env=key_env,
            key_rejected=status == 400 and b"API_KEY_INVALID" in body,
        )
