"""The OpenAI Responses wire (``POST /responses``), beside Chat Completions.

Shapes from OpenAI's API reference (responses/create, the ``response`` object and its
streaming events) and the official ``openai`` SDK's types
(``openai/types/responses/response_stream_event.py``, ``response_reasoning_item.py``,
``response_usage.py``). The request is made from the Chat Completions body the provider
builds (:func:`responses_body`): the system message becomes ``instructions``, messages
become ``input`` items, tools go flat. A turn's output items (reasoning items with their
``encrypted_content``, messages, function calls) are kept as they came in the assistant
message's ``raw`` under ``output`` and go back in order, unchanged: stateless by default
(``store: false``), so nothing but those items carries the model's reasoning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ikigai_core.conversation import UsageKeys
from ikigai_core.errors import ConfigError
from ikigai_core.providers import Provider
from ikigai_core.wire import TurnBuilder, stream_error

if TYPE_CHECKING:
    from ikigai_core.conversation import AssistantMessage

WIRE_ENV = "OPENAI_WIRE"
"""``responses``, ``chat`` or ``auto`` (the default)."""
WIRES = ("responses", "chat", "auto")
CHAIN_ENV = "OPENAI_PREVIOUS_RESPONSE_ID"
"""``true``: the Responses wire stores responses (``store: true``) and sends only what is
new since the last one, with its ``previous_response_id``."""
OPENAI_HOST = "api.openai.com"
KEPT = ("output", "response_id")
"""The keys a Responses turn's ``raw`` adds to its Chat Completions form."""
ENCRYPTED_REASONING = "reasoning.encrypted_content"


def choose_wire(environ: Mapping[str, str], base_url_env: str) -> str:
    """``responses`` or ``chat``: :data:`WIRE_ENV`, and for ``auto`` the base URL (the
    Responses wire for OpenAI's own API, Chat Completions for any other server)."""
    value = environ.get(WIRE_ENV, "").strip() or "auto"
    if value not in WIRES:
        raise ConfigError(f"environment variable {WIRE_ENV} must be one of {', '.join(WIRES)}, "
                          f"got {value!r}; fix or unset it")
    if value != "auto":
        return value
    url = environ.get(base_url_env)
    return "responses" if not url or urlsplit(url).hostname == OPENAI_HOST else "chat"


def chained(environ: Mapping[str, str]) -> bool:
    """Whether :data:`CHAIN_ENV` asks for ``previous_response_id`` (``true`` or ``false``)."""
    value = environ.get(CHAIN_ENV, "").strip() or "false"
    if value not in ("true", "false"):
        raise ConfigError(f"environment variable {CHAIN_ENV} must be true or false, "
                          f"got {value!r}; fix or unset it")
    return value == "true"


def chat_body(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` as Chat Completions takes it: assistant messages without the Responses
    items a turn kept (a conversation begun on the Responses wire goes on over chat)."""
    messages = [{k: v for k, v in message.items() if k not in KEPT}
                for message in body.get("messages") or ()]
    return {**body, "messages": messages}


def responses_body(body: Mapping[str, Any], *, chain: bool) -> dict[str, Any]:
    """The Chat Completions ``body`` as a Responses request.

    Stateless unless ``chain``: ``store: false``, and reasoning comes back encrypted
    (``include``) to be replayed. With ``chain``, the responses are stored and only the
    messages after the last answered turn go, with that turn's ``previous_response_id``.
    """
    messages = list(body.get("messages") or ())
    out: dict[str, Any] = {"model": body["model"]}
    if messages and messages[0].get("role") == "system":
        out["instructions"] = messages.pop(0)["content"]
    previous = _last_response(messages) if chain else None
    if previous is not None:
        out["previous_response_id"] = messages[previous]["response_id"]
        messages = messages[previous + 1:]
    out["input"] = [item for message in messages for item in input_items(message)]
    if body.get("tools"):
        out["tools"] = [{"type": "function", **tool["function"]} for tool in body["tools"]]
    if body.get("prompt_cache_key"):
        out["prompt_cache_key"] = body["prompt_cache_key"]
    if body.get("reasoning_effort"):
        out["reasoning"] = {"effort": body["reasoning_effort"], "summary": "auto"}
    out["store"] = chain
    if not chain:
        out["include"] = [ENCRYPTED_REASONING]
    if body.get("stream"):
        out["stream"] = True
    return out


def _last_response(messages: Sequence[Mapping[str, Any]]) -> int | None:
    """The index of the last assistant message that has a response id."""
    found = [i for i, message in enumerate(messages) if message.get("response_id")]
    return found[-1] if found else None


def assistant_message(content: str | None,
                      calls: Sequence[tuple[str, str, str]]) -> dict[str, Any]:
    """An assistant message in Chat Completions request form; ``calls`` are ``(id, name,
    arguments text)``."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
            for call_id, name, arguments in calls
        ]
    return message


def input_items(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One Chat Completions message as Responses ``input`` items: a Responses turn's own
    output items as they came; else the text and ``function_call`` items (by ``call_id``);
    a tool result as ``function_call_output``."""
    role = message.get("role")
    if role == "tool":
        return [{"type": "function_call_output", "call_id": message["tool_call_id"],
                 "output": message["content"]}]
    if role != "assistant":
        return [{"role": role, "content": _input_content(message["content"])}]
    if "output" in message:
        return [dict(item) for item in message["output"]]
    items: list[dict[str, Any]] = []
    if message.get("content"):
        items.append({"role": "assistant", "content": message["content"]})
    items += [{"type": "function_call", "call_id": call["id"],
               "name": call["function"]["name"], "arguments": call["function"]["arguments"]}
              for call in message.get("tool_calls") or ()]
    return items


def _input_content(content: Any) -> Any:
    """A message's content as an input item's: text as is; Chat Completions parts as
    ``input_text`` and ``input_image`` (its ``data:`` URL) parts."""
    if isinstance(content, str):
        return content
    return [{"type": "input_text", "text": part["text"]} if part["type"] == "text"
            else {"type": "input_image", "image_url": part["image_url"]["url"]}
            for part in content]


class ResponseTurn(TurnBuilder):
    """A turn read from the Responses wire: also the response's id."""

    response_id: str | None = None


class ResponsesWire(Provider):
    """Reads Responses replies and streams for the ``openai`` provider (which builds the
    request: :func:`responses_body`). Its stream ends with ``response.completed`` (or
    ``response.incomplete``); ``response.failed`` and ``error`` are the provider's error."""

    name = "openai"
    stream_end = "response.completed"
    usage_keys = UsageKeys("input_tokens", "output_tokens",
                           cache_read="input_tokens_details.cached_tokens")

    def new_turn(self) -> ResponseTurn:
        """An empty turn reading ``input_tokens``/``output_tokens``."""
        return ResponseTurn(self.usage_keys)

    def read_event(self, data: dict[str, Any], turn: TurnBuilder) -> bool:
        """One typed event: text and argument deltas, each finished output item, and the
        terminal events; a ``response`` object read whole (a reply that was not streamed)."""
        kind = data.get("type")
        index = data.get("output_index", 0)
        if kind == "response.output_text.delta":
            turn.add_text(data.get("delta"))
        elif kind == "response.reasoning_summary_text.delta":
            turn.add_thinking(data.get("delta"))
        elif kind == "response.output_item.added" and data["item"].get("type") == "function_call":
            item = data["item"]
            turn.add_call(index, item.get("call_id"), item.get("name"), item.get("arguments", ""))
        elif kind == "response.function_call_arguments.delta":
            turn.add_call(index, arguments=data.get("delta") or "")
        elif kind == "response.output_item.done":
            turn.parts[index] = data["item"]
        elif kind in ("response.completed", "response.incomplete"):
            self._finish(data["response"], turn)
            return True
        elif kind == "response.failed":
            raise _failure(self.name, data["response"].get("error"))
        elif kind == "error":
            raise _failure(self.name, data)
        elif data.get("object") == "response":
            self._read_output(data.get("output") or (), turn)
            self._finish(data, turn)
        return False

    def finish_turn(self, turn: TurnBuilder) -> AssistantMessage:
        """The turn in Chat Completions form, with the response's output items (kept to go
        back unchanged, unless they miss one of its calls) and its id."""
        calls = turn.call_texts()
        raw = assistant_message(turn.text or None, calls)
        items = turn.ordered_parts()
        called = [item.get("call_id") for item in items if item.get("type") == "function_call"]
        if items and called == [call_id for call_id, _, _ in calls]:
            raw["output"] = items
        if isinstance(turn, ResponseTurn) and turn.response_id:
            raw["response_id"] = turn.response_id
        return turn.message(raw=raw)

    def _read_output(self, items: Sequence[Mapping[str, Any]], turn: TurnBuilder) -> None:
        """A whole response's output items: text, calls, and the items kept."""
        for index, item in enumerate(items):
            if item.get("type") == "message":
                for part in item.get("content") or ():
                    turn.add_text(part.get("text") or part.get("refusal"))
            elif item.get("type") == "function_call":
                turn.add_call(index, item.get("call_id"), item.get("name"),
                              item.get("arguments") or "")
            elif item.get("type") == "reasoning":
                for part in item.get("summary") or ():
                    turn.add_thinking(part.get("text"))
            turn.parts[index] = dict(item)

    def _finish(self, response: Mapping[str, Any], turn: TurnBuilder) -> None:
        """The response's usage, id, status (``incomplete (max_output_tokens)``) and, when
        it lists them, its output items (complete, as they go back)."""
        turn.add_usage(response.get("usage"))
        if response.get("output"):
            turn.parts = {i: dict(item) for i, item in enumerate(response["output"])}
        if isinstance(turn, ResponseTurn):
            turn.response_id = response.get("id")
        reason = (response.get("incomplete_details") or {}).get("reason")
        status = response.get("status")
        turn.stop(f"{status} ({reason})" if reason else status)


def _failure(provider_name: str, error: Any) -> Exception:
    """The error of a ``response.failed`` or ``error`` event (``code`` and ``message``)."""
    error = error if isinstance(error, Mapping) else {}
    return stream_error(provider_name, {"error": {"type": error.get("code"),
                                                  "message": error.get("message")}})
