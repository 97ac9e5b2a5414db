"""The Anthropic Messages provider: its tools and wire shapes.

Shapes from Anthropic's API reference (the ``message`` object, content blocks ``text``
and ``tool_use``, ``tool_result`` blocks) and its streaming guide (``message_start``,
``content_block_start/delta/stop``, ``message_delta``, ``message_stop``, ``ping``,
``error``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ikigai_core.conversation import UsageKeys
from ikigai_core.errors import UsageError
from ikigai_core.providers import Provider, ProviderRequest, ToolFit
from ikigai_core.schema_tools import draft_2020_12
from ikigai_core.schema_top import one_object
from ikigai_provider_anthropic import caching, rules

if TYPE_CHECKING:
    from ikigai_core.attachments import Attachment
    from ikigai_core.conversation import AssistantMessage, Conversation, ToolResult
    from ikigai_core.tools import Tool
    from ikigai_core.wire import TurnBuilder

MAX_TOKENS = 8192
"""``max_tokens`` is required by the Messages API."""
THINKING_BUDGETS = {"low": 2048, "medium": 8192, "high": 16384}
"""``thinking.budget_tokens`` per ``--reasoning`` effort: at least the API's 1,024, and with
:data:`MAX_TOKENS` for the answer under every model's output limit (Opus 4: 32,000)."""
NOT_THINKING_MODELS = ("claude-3-5", "claude-3-haiku", "claude-3-opus", "claude-3-sonnet",
                       "claude-2", "claude-instant")
"""Models without extended thinking (it came with Claude 3.7 Sonnet)."""
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
"""The image types a ``tool_result`` may hold (the vision guide's list)."""


class AnthropicSerializer(Provider):
    """``POST {ANTHROPIC_BASE_URL}/v1/messages`` with ``x-api-key``; roles alternate, so
    user text that follows tool results joins their message, after them."""

    name = "anthropic"
    default_model = "claude-sonnet-4-5"
    api_key_env = ("ANTHROPIC_API_KEY",)
    base_url_env = "ANTHROPIC_BASE_URL"
    settings_env = {"cache_ttl": caching.TTL_ENV}
    usage_keys = UsageKeys("input_tokens", "output_tokens",
                           cache_read="cache_read_input_tokens",
                           cache_write="cache_creation_input_tokens", cache_apart=True)
    models_path = "/v1/models?limit=1000"  # GET {data: [{id, display_name, ...}], has_more}
    known_models = {"claude-opus-4-1": 200_000, "claude-opus-4-0": 200_000,
                    "claude-sonnet-4-5": 200_000, "claude-sonnet-4-0": 200_000,
                    "claude-haiku-4-5": 200_000, "claude-3-5-haiku-latest": 200_000}
    default_base_url = "https://api.anthropic.com"
    path = "/v1/messages"
    auth_header, auth_prefix = "x-api-key", ""
    headers = {"anthropic-version": "2023-06-01"}
    stream_end = "message_stop"
    merge_key = "content"
    image_types = IMAGE_TYPES

    def fit_tool(self, tool: Tool) -> ToolFit:
        """``{name, description, input_schema}``, the schema unchanged (spec decision 16) but
        for draft-07 keywords (the API reads draft 2020-12) and a top level that is not one
        object; left out if the API would still reject it (``rules.py``)."""
        converted, changes = draft_2020_12(tool.parameters)
        schema, top = one_object(converted)
        declaration = {"name": tool.name, "description": tool.description, "input_schema": schema}
        return ToolFit.checked(tool.name, declaration, [*changes, *top],
                               rules.problems(declaration))

    def request_body(
        self, conversation: Conversation, tools: Sequence[Tool], *, model: str, stream: bool
    ) -> dict[str, Any]:
        """``model``, ``max_tokens``, top-level ``system``, ``messages``, ``tools``."""
        body: dict[str, Any] = {"model": model, "max_tokens": MAX_TOKENS}
        if conversation.system:
            body["system"] = conversation.system
        body["messages"] = self.wire_messages(conversation)
        sent = self.declarations(tools)
        if sent:
            body["tools"] = sent
        if stream:
            body["stream"] = True
        return body

    def with_reasoning(self, body: dict[str, Any], effort: str, *, model: str
                       ) -> dict[str, Any]:
        """``thinking: {type: enabled, budget_tokens}`` (:data:`THINKING_BUDGETS`), and
        ``max_tokens`` raised to hold the budget and the answer (the API wants it greater
        than the budget; no ``temperature`` is sent, which thinking forbids)."""
        if model.startswith(NOT_THINKING_MODELS):
            raise UsageError(f"model '{model}' of provider 'anthropic' has no extended "
                             "thinking; leave out --reasoning, or choose a model that has "
                             "(claude-sonnet-4-5, claude-opus-4-1)")
        budget = THINKING_BUDGETS[effort]
        return {**body, "max_tokens": budget + MAX_TOKENS,
                "thinking": {"type": "enabled", "budget_tokens": budget}}

    def user_entry(self, text: str, images: Sequence[Attachment] = ()) -> dict[str, Any]:
        """A ``text`` block, after an ``image`` block (base64) per image (the vision
        guide puts images first)."""
        return {"role": "user", "content": [*map(_image_block, images),
                                            {"type": "text", "text": text}]}

    def takes_images(self, model: str) -> bool:
        """Every Claude model since Claude 3."""
        return not model.startswith(("claude-2", "claude-instant"))

    def http_request(
        self, body: Mapping[str, Any], *, model: str, stream: bool, api_key: str | None,
        environ: Mapping[str, str],
    ) -> ProviderRequest:
        """The request, ``body`` with its prompt-cache breakpoints (:mod:`.caching`), kept
        as long as ``ANTHROPIC_CACHE_TTL`` says."""
        return super().http_request(caching.marked(body, caching.cache_ttl(environ)),
                                    model=model, stream=stream, api_key=api_key,
                                    environ=environ)

    def result_entries(self, results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        """One user message of ``tool_result`` blocks, ``is_error`` on failures; a result
        with images holds the envelope as a ``text`` block, then an ``image`` block each."""
        blocks: list[dict[str, Any]] = []
        for result in results:
            content: Any = result.envelope_json
            images = [a for a in result.attachments if a.mime_type in IMAGE_TYPES]
            if images:
                content = [{"type": "text", "text": content}, *map(_image_block, images)]
            block = {"type": "tool_result", "tool_use_id": result.call.id, "content": content}
            blocks.append({**block, "is_error": True} if result.is_error else block)
        return [{"role": "user", "content": blocks}]

    def assistant_entry(self, message: AssistantMessage) -> dict[str, Any]:
        """The blocks as the model sent them, else ``text`` and ``tool_use`` blocks."""
        if isinstance(message.raw, list):
            return {"role": "assistant", "content": [dict(block) for block in message.raw]}
        blocks: list[dict[str, Any]] = [{"type": "tool_use", "id": call.id, "name": call.name,
                                         "input": call.arguments_or_empty}
                                        for call in message.tool_calls]
        if message.text:
            blocks.insert(0, {"type": "text", "text": message.text})
        return {"role": "assistant", "content": blocks}

    def parse_response(self, body: Mapping[str, Any]) -> AssistantMessage:
        """A ``message`` object: its ``text`` and ``tool_use`` blocks, in order."""
        turn = self.new_turn()
        for index, block in enumerate(body["content"]):
            _start_block(turn, index, block, block.get("input"))
        turn.stop(body.get("stop_reason"))
        turn.add_usage(body.get("usage"))
        return self.finish_turn(turn)

    def read_event(self, data: dict[str, Any], turn: TurnBuilder) -> bool:
        """Text deltas as they come, ``tool_use`` input gathered per block; input tokens
        come at ``message_start``, output tokens at each ``message_delta``."""
        kind = data.get("type")
        if kind == "message_start":
            turn.add_usage((data.get("message") or {}).get("usage"))
        elif kind == "content_block_start":
            _start_block(turn, data["index"], data["content_block"], "")
        elif kind == "content_block_delta":
            _apply_delta(turn, data["index"], data["delta"])
        elif kind == "message_delta":
            turn.stop(data.get("delta", {}).get("stop_reason"))
            turn.add_usage(data.get("usage"))
        return kind == "message_stop"

    def finish_turn(self, turn: TurnBuilder) -> AssistantMessage:
        """The turn with its blocks (``tool_use`` input as parsed) to go back unchanged."""
        message = turn.message(raw=turn.ordered_parts())
        uses = [block for block in message.raw if block.get("type") == "tool_use"]
        for block, call in zip(uses, message.tool_calls, strict=True):
            block["input"] = call.arguments_or_empty
        return message


def _image_block(image: Attachment) -> dict[str, Any]:
    """An ``image`` block holding ``image`` as base64."""
    return {"type": "image", "source": {"type": "base64", "media_type": image.mime_type,
                                        "data": image.base64}}


def _start_block(turn: TurnBuilder, index: int, block: Mapping[str, Any], given: Any) -> None:
    """A new block; a ``tool_use`` block's input is ``given`` (in a stream, JSON text
    in the deltas that follow)."""
    turn.parts[index] = dict(block)
    if block.get("type") == "text":
        turn.add_text(block.get("text"))
    elif block.get("type") == "thinking":
        turn.add_thinking(block.get("thinking"))
    elif block.get("type") == "tool_use":
        turn.add_call(index, block["id"], block["name"], given)


def _apply_delta(turn: TurnBuilder, index: int, delta: Mapping[str, Any]) -> None:
    """Grow block ``index`` by one delta."""
    block, kind = turn.parts[index], delta.get("type")
    if kind == "text_delta":
        block["text"] = block.get("text", "") + delta["text"]
        turn.add_text(delta["text"])
    elif kind == "input_json_delta":
        turn.add_call(index, arguments=delta["partial_json"])
    elif kind == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + delta["thinking"]
        turn.add_thinking(delta["thinking"])
    elif kind == "signature_delta":
        block["signature"] = delta["signature"]
