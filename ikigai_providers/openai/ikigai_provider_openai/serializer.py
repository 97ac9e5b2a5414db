"""The OpenAI provider: its tools, and the Chat Completions (and compatible servers) wire;
the Responses wire is in ``responses.py``, chosen per request (``OPENAI_WIRE``).

Shapes from OpenAI's API reference (chat/create, the ``chat.completion`` object and
streamed ``chat.completion.chunk`` objects ending with ``data: [DONE]``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

from ikigai_core.conversation import UsageKeys
from ikigai_core.errors import UsageError
from ikigai_core.providers import Provider, ProviderRequest, ToolFit
from ikigai_core.schema_tools import draft_2020_12
from ikigai_core.schema_top import one_object
from ikigai_core.strictjson import loads
from ikigai_provider_openai import rules
from ikigai_provider_openai.responses import (
    CHAIN_ENV,
    WIRE_ENV,
    ResponsesWire,
    assistant_message,
    chained,
    chat_body,
    choose_wire,
    responses_body,
)
from ikigai_provider_openai.strict import (
    STRICT_FORM,
    NotStrict,
    drop_nulls,
    loose_parameters,
    strict_parameters,
)

if TYPE_CHECKING:
    from ikigai_core.conversation import (
        AssistantMessage,
        Conversation,
        TextDelta,
        ThinkingDelta,
        ToolResult,
    )
    from ikigai_core.sse import ServerSentEvent
    from ikigai_core.tools import Tool
    from ikigai_core.wire import TurnBuilder


NOT_REASONING_MODELS = ("gpt-3.5", "gpt-4")
"""Models that take no reasoning effort (``gpt-4o``, ``gpt-4.1``...): ``--reasoning`` with one
is refused before anything is sent."""
TEXT_ONLY_MODELS = ("gpt-3.5", "o1-mini", "o3-mini", "gpt-4-0", "gpt-4-3")
"""Models that read no images (OpenAI's model pages): a prompt with one is refused first."""


def cache_key(messages: Sequence[Mapping[str, Any]]) -> str:
    """The ``prompt_cache_key`` of a conversation: a digest of its system prompt and first
    user message, so every request of one conversation (also resumed from the session
    log) is routed to the cache holding its prefix (issue 26 §2; OpenAI's prompt caching
    guide: requests sharing a key and a prefix of 1024 tokens or more hit the cache)."""
    start = [next((m for m in messages if m.get("role") == role), None)
             for role in ("system", "user")]
    digest = hashlib.sha256(json.dumps(start, sort_keys=True).encode()).hexdigest()
    return f"ikigai-{digest[:32]}"


class OpenAISerializer(Provider):
    """``POST {OPENAI_BASE_URL}/responses`` or ``/chat/completions`` (``OPENAI_WIRE``; by
    default Responses for OpenAI's own API, Chat Completions for any other server) with
    ``Authorization: Bearer``; with ``OPENAI_BASE_URL`` set (llama.cpp, vLLM, Ollama,
    LM Studio) the key is optional."""

    name = "openai"
    default_model = "gpt-4o-mini"
    api_key_env = ("OPENAI_API_KEY",)
    base_url_env = "OPENAI_BASE_URL"
    models_path = "/models"  # GET {data: [{id, created, owned_by}]}: no context windows
    known_models = {"gpt-5": 400_000, "gpt-5-mini": 400_000, "gpt-5-nano": 400_000,
                    "gpt-4.1": 1_047_576, "gpt-4.1-mini": 1_047_576, "gpt-4.1-nano": 1_047_576,
                    "gpt-4o": 128_000, "gpt-4o-mini": 128_000, "o3": 200_000,
                    "o4-mini": 200_000}
    default_base_url = "https://api.openai.com/v1"
    path = "/chat/completions"
    stream_done, stream_end = "[DONE]", "data: [DONE]"
    settings_env = {"wire": WIRE_ENV, "previous_response_id": CHAIN_ENV}
    usage_keys = UsageKeys("prompt_tokens", "completion_tokens",
                           cache_read="prompt_tokens_details.cached_tokens")
    system_role = "system"
    image_types = ("image/png", "image/jpeg", "image/gif", "image/webp")
    responses_path = "/responses"
    responses = ResponsesWire()
    """Reads the Responses wire's replies and streams."""

    def fit_tool(self, tool: Tool) -> ToolFit:
        """A ``function`` tool, strict when its parameters can be (spec decision 15), else
        ``strict: false``; left out if the API would still reject it (``rules.py``)."""
        converted, drafted = draft_2020_12(tool.parameters)
        top, changes = one_object(converted)
        changes = [*drafted, *changes]
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

    def takes_images(self, model: str) -> bool:
        """Every model but the few known to read text only (:data:`TEXT_ONLY_MODELS`)."""
        return not model.startswith(TEXT_ONLY_MODELS)

    def with_reasoning(self, body: dict[str, Any], effort: str, *, model: str
                       ) -> dict[str, Any]:
        """``reasoning_effort`` (Chat Completions; the Responses wire makes it
        ``reasoning: {effort, summary: "auto"}``); a model known not to reason is refused."""
        if model.startswith(NOT_REASONING_MODELS):
            raise UsageError(f"model '{model}' of provider 'openai' takes no reasoning "
                             "effort; leave out --reasoning, or choose a reasoning model "
                             "(gpt-5, o3, o4-mini)")
        return {**body, "reasoning_effort": effort}

    def prepare_arguments(self, tool: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Drop the nulls strict mode made the model send for optional properties."""
        return drop_nulls(one_object(tool.parameters)[0], arguments)

    def request_body(
        self, conversation: Conversation, tools: Sequence[Tool], *, model: str, stream: bool
    ) -> dict[str, Any]:
        """``model``, ``messages``, ``tools`` (left out when there are none: OpenAI
        rejects an empty list), the conversation's ``prompt_cache_key``, and the streaming
        switches."""
        messages = self.wire_messages(conversation)
        body: dict[str, Any] = {"model": model, "messages": messages}
        sent = self.declarations(tools)
        if sent:
            body["tools"] = sent
        body["prompt_cache_key"] = cache_key(messages)
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def http_request(
        self, body: Mapping[str, Any], *, model: str, stream: bool, api_key: str | None,
        environ: Mapping[str, str],
    ) -> ProviderRequest:
        """The request on the wire ``environ`` chooses (:func:`choose_wire`): ``body`` as
        Chat Completions takes it, or made a Responses request; a bad setting stops the
        call before anything is sent."""
        request = super().http_request(body, model=model, stream=stream, api_key=api_key,
                                       environ=environ)
        if choose_wire(environ, self.base_url_env) == "chat":
            return request.replace(body=chat_body(body))
        url = request.url.removesuffix(self.path) + self.responses_path
        return request.replace(url=url, body=responses_body(body, chain=chained(environ)))

    def result_entries(self, results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        """One ``tool`` message per result."""
        return [{"role": "tool", "tool_call_id": result.call.id, "content": result.envelope_json}
                for result in results]

    def assistant_entry(self, message: AssistantMessage) -> dict[str, Any]:
        """As the model sent it (argument text unchanged), else with ``tool_calls``."""
        if isinstance(message.raw, Mapping):
            return dict(message.raw)
        return assistant_message(message.text or None, [
            (call.id, call.name, json.dumps(call.arguments_or_empty))
            for call in message.tool_calls])

    def parse_response(self, body: Mapping[str, Any]) -> AssistantMessage:
        """A ``chat.completion`` object: the first choice's message (a Responses
        ``response`` object goes to :attr:`responses`)."""
        if body.get("object") == "response":
            return self.responses.parse_response(body)
        choice = body["choices"][0]
        message = choice["message"]
        turn = self.new_turn()
        turn.add_thinking(message.get("reasoning_content"))
        turn.add_text(message.get("content") or message.get("refusal"))
        for index, call in enumerate(message.get("tool_calls") or ()):
            function = call["function"]
            turn.add_call(index, call["id"], function["name"], function.get("arguments") or "")
        turn.stop(choice.get("finish_reason"))
        turn.add_usage(body.get("usage"))
        return self.finish_turn(turn)

    def parse_stream(
        self, events: Iterable[ServerSentEvent]
    ) -> Iterator[TextDelta | ThinkingDelta | AssistantMessage]:
        """Chat Completions chunks, or typed Responses events (told by the first event's
        ``type``), read by :attr:`responses`."""
        events = iter(events)
        first = next(events, None)
        rest = events if first is None else chain([first], events)
        if first is not None and _is_typed(first.data):
            return self.responses.parse_stream(rest)
        return super().parse_stream(rest)

    def read_event(self, data: dict[str, Any], turn: TurnBuilder) -> bool:
        """A ``chat.completion.chunk``: text deltas, tool calls in pieces by ``index``; the
        last chunk brings the usage (``include_usage``)."""
        turn.add_usage(data.get("usage"))
        for choice in data.get("choices") or ():
            delta = choice.get("delta") or {}
            turn.add_thinking(delta.get("reasoning_content"))  # servers that show it
            turn.add_text(delta.get("content"))
            for piece in delta.get("tool_calls") or ():
                function = piece.get("function") or {}
                turn.add_call(piece.get("index", 0), piece.get("id"), function.get("name"),
                              function.get("arguments") or "")
            turn.stop(choice.get("finish_reason"))
        return False

    def finish_turn(self, turn: TurnBuilder) -> AssistantMessage:
        """The turn, kept in request form to go back as the model sent it."""
        return turn.message(raw=assistant_message(turn.text or None, turn.call_texts()))


def _is_typed(data: str) -> bool:
    """Whether an event's data is a typed Responses event (``{"type": ...}``)."""
    try:
        value = loads(data)
    except ValueError:
        return False
    return isinstance(value, dict) and isinstance(value.get("type"), str)
