"""The Google Gemini provider: its tools and wire shapes.

Shapes from the Gemini API reference (``GenerateContentResponse``: ``candidates`` with
``content.parts`` holding ``text``, ``functionCall`` and ``thoughtSignature``;
``functionResponse`` parts; ``streamGenerateContent?alt=sse`` sends one response per
event) and the thought-signatures guide (send the model's turn back unchanged).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ikigai_core.conversation import UsageKeys
from ikigai_core.errors import ProviderError, UsageError
from ikigai_core.providers import Provider, ToolFit, token_count
from ikigai_provider_google import rules
from ikigai_provider_google.schema import Unfit, gemini_parameters, json_parameters

if TYPE_CHECKING:
    from ikigai_core.attachments import Attachment
    from ikigai_core.conversation import AssistantMessage, Conversation, ToolCall, ToolResult
    from ikigai_core.tools import Tool
    from ikigai_core.wire import TurnBuilder

SYNTHETIC_ID = "gemini-call-"
"""Prefix of the ids ikigai makes up for calls Gemini sent without one (never sent back)."""
IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp")
"""The image types a ``functionResponse`` may hold (multimodal function responses)."""
THINKING_BUDGETS = {"low": 1024, "medium": 8192, "high": 24576}
"""Gemini 2.5's ``thinkingBudget`` per ``--reasoning`` effort (24,576: Flash's most)."""
NOT_THINKING_MODELS = ("gemini-1", "gemini-2.0")
"""Models that do not think (thinking came with Gemini 2.5)."""
TEXT_ONLY_RESULTS = ("gemini-1", "gemini-2")
"""Models older than Gemini 3, which take no media in a ``functionResponse``: they get the
envelope's text alone."""


class GoogleSerializer(Provider):
    """``POST {GOOGLE_GEMINI_BASE_URL}/v1beta/models/{model}:generateContent``
    (``:streamGenerateContent?alt=sse``) with ``x-goog-api-key``; a bad key is answered
    with 400 ``API_KEY_INVALID``."""

    name = "google"
    default_model = "gemini-2.5-flash"
    api_key_env = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
    base_url_env = "GOOGLE_GEMINI_BASE_URL"
    models_path = "/v1beta/models?pageSize=1000"  # GET {models: [...], nextPageToken}
    known_models = {"gemini-2.5-pro": 1_048_576, "gemini-2.5-flash": 1_048_576,
                    "gemini-2.5-flash-lite": 1_048_576, "gemini-2.0-flash": 1_048_576}
    default_base_url = "https://generativelanguage.googleapis.com"
    path = "/v1beta/models/{model}:generateContent"
    stream_path = "/v1beta/models/{model}:streamGenerateContent?alt=sse"
    model_prefix = "models/"
    auth_header, auth_prefix = "x-goog-api-key", ""
    key_rejected_marker = b"API_KEY_INVALID"
    stream_end = "a finishReason"
    image_types = IMAGE_TYPES
    usage_keys = UsageKeys("promptTokenCount", "candidatesTokenCount",
                           cache_read="cachedContentTokenCount")

    def read_models(self, body: Any) -> dict[str, int | None]:
        """``{"models": [{"name": "models/NAME", "inputTokenLimit": N,
        "supportedGenerationMethods": [...]}]}``: the models that generate content."""
        models = body.get("models") if isinstance(body, dict) else None
        if not isinstance(models, list):
            raise ValueError("the model list holds no 'models' list")
        return {entry["name"].removeprefix(self.model_prefix):
                token_count(entry.get("inputTokenLimit"))
                for entry in models if isinstance(entry, dict)
                and isinstance(entry.get("name"), str)
                and "generateContent" in (entry.get("supportedGenerationMethods") or ())}

    def fit_tool(self, tool: Tool) -> ToolFit:
        """A ``functionDeclaration`` with the parameters in Gemini's ``Schema`` subset, or,
        where that would lose a property (an object of any keys), as
        ``parametersJsonSchema`` (``schema.py``); left out if the API would still reject
        it (``rules.py``)."""
        declaration: dict[str, Any] = {"name": tool.name, "description": tool.description}
        try:
            parameters, changes = gemini_parameters(tool.parameters)
        except Unfit as exc:
            declaration["parametersJsonSchema"], changes = json_parameters(tool.parameters)
            changes = [f"sent as parametersJsonSchema: {exc}", *changes]
        else:
            if parameters is not None:
                declaration["parameters"] = parameters
        return ToolFit.checked(tool.name, declaration, changes, rules.problems(declaration))

    def request_body(
        self, conversation: Conversation, tools: Sequence[Tool], *, model: str, stream: bool
    ) -> dict[str, Any]:
        """``contents``, ``systemInstruction``, ``tools: [{functionDeclarations}]``; the
        model and streaming are in the URL."""
        body: dict[str, Any] = {"contents": self.wire_messages(conversation)}
        if model.removeprefix(self.model_prefix).startswith(TEXT_ONLY_RESULTS):
            for part in (part for content in body["contents"] for part in content["parts"]):
                part.get("functionResponse", {}).pop("parts", None)
        if conversation.system:
            body["systemInstruction"] = {"parts": [{"text": conversation.system}]}
        sent = self.declarations(tools)
        if sent:
            body["tools"] = [{"functionDeclarations": sent}]
        return body

    def with_reasoning(self, body: dict[str, Any], effort: str, *, model: str
                       ) -> dict[str, Any]:
        """``generationConfig.thinkingConfig`` with ``includeThoughts``: Gemini 2.5 takes a
        ``thinkingBudget`` (:data:`THINKING_BUDGETS`), later models a ``thinkingLevel``
        (the API refuses both at once; Pro models have no ``medium``: they get ``high``)."""
        name = model.removeprefix(self.model_prefix)
        if name.startswith(NOT_THINKING_MODELS):
            raise UsageError(f"model '{model}' of provider 'google' does not think; leave "
                             "out --reasoning, or choose a model that does (gemini-2.5-flash)")
        config: dict[str, Any] = {"includeThoughts": True}
        if name.startswith("gemini-2"):
            config["thinkingBudget"] = THINKING_BUDGETS[effort]
        else:
            config["thinkingLevel"] = ("high" if effort == "medium" and "flash" not in name
                                       else effort)
        generation = {**body.get("generationConfig", {}), "thinkingConfig": config}
        return {**body, "generationConfig": generation}

    def user_entry(self, text: str, images: Sequence[Attachment] = ()) -> dict[str, Any]:
        """A ``text`` part, after an ``inlineData`` part per image."""
        return {"role": "user", "parts": [*map(_inline_data, images), {"text": text}]}

    def result_entries(self, results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        """One user content of ``functionResponse`` parts; a result's images go in its
        own ``parts`` as ``inlineData``."""
        return [{"role": "user", "parts": [{"functionResponse": _function_response(result)}
                                           for result in results]}]

    def assistant_entry(self, message: AssistantMessage) -> dict[str, Any]:
        """Unchanged as the model sent it (its ``thoughtSignature`` must go back), else
        ``text`` and ``functionCall`` parts."""
        if isinstance(message.raw, Mapping):
            return dict(message.raw)
        parts: list[dict[str, Any]] = [{"text": message.text}] if message.text else []
        parts += [{"functionCall": _with_real_id(call, {"name": call.name,
                                                        "args": call.arguments_or_empty})}
                  for call in message.tool_calls]
        return {"role": "model", "parts": parts}

    def parse_response(self, body: Mapping[str, Any]) -> AssistantMessage:
        """A ``GenerateContentResponse``: the first candidate's parts."""
        if not body.get("candidates"):
            raise self._no_candidates(body)
        return super().parse_response(body)

    def read_event(self, data: dict[str, Any], turn: TurnBuilder) -> bool:
        """One response: visible text parts are text, ``functionCall`` parts calls (its
        ``finishReason`` is ``STOP`` with or without calls); usage counts are cumulative."""
        turn.add_usage(data.get("usageMetadata"))
        if not data.get("candidates"):
            if (data.get("promptFeedback") or {}).get("blockReason"):
                raise self._no_candidates(data)
            return False
        candidate = data["candidates"][0]
        for part in (candidate.get("content") or {}).get("parts") or ():
            turn.parts[len(turn.parts)] = dict(part)
            if part.get("thought"):
                turn.add_thinking(part.get("text"))
            else:
                turn.add_text(part.get("text"))
            if "functionCall" in part:
                _add_call(turn, part["functionCall"])
        turn.stop(candidate.get("finishReason"))
        return False

    def stream_complete(self, turn: TurnBuilder) -> bool:
        """The stream ends after a ``finishReason``."""
        return turn.stop_reason is not None

    def finish_turn(self, turn: TurnBuilder) -> AssistantMessage:
        """The turn with every part to go back unchanged."""
        parts = turn.ordered_parts()
        return turn.message(raw={"role": "model", "parts": parts} if parts else None)

    def _no_candidates(self, body: Mapping[str, Any]) -> ProviderError:
        reason = (body.get("promptFeedback") or {}).get("blockReason")
        because = f": the prompt was blocked ({reason})" if reason else ""
        return ProviderError(f"Provider '{self.name}' returned no answer{because}")


def _add_call(turn: TurnBuilder, call: Mapping[str, Any]) -> None:
    """A call; one sent without an id gets a stable made-up one."""
    index = turn.call_count
    call_id = call.get("id") or _synthetic_id(index, call)
    turn.add_call(index, call_id, call["name"], call.get("args", {}))


def _synthetic_id(index: int, call: Mapping[str, Any]) -> str:
    """A stable id for a call Gemini sent without one. (``hashlib`` loads OpenSSL: imported
    here, not by every process that only asks the provider its key variable.)"""
    import hashlib

    digest = hashlib.sha256(json.dumps(call, sort_keys=True).encode()).hexdigest()[:12]
    return f"{SYNTHETIC_ID}{index}-{digest}"


def _function_response(result: ToolResult) -> dict[str, Any]:
    fields = _with_real_id(result.call, {"name": result.call.name,
                                         "response": dict(result.envelope)})
    images = [a for a in result.attachments if a.mime_type in IMAGE_TYPES]
    if images:
        fields["parts"] = [_inline_data(a) for a in images]
    return fields


def _inline_data(image: Attachment) -> dict[str, Any]:
    """An ``inlineData`` part holding ``image`` as base64."""
    return {"inlineData": {"mimeType": image.mime_type, "data": image.base64}}


def _with_real_id(call: ToolCall, fields: dict[str, Any]) -> dict[str, Any]:
    if not call.id.startswith(SYNTHETIC_ID):
        fields["id"] = call.id
    return fields
