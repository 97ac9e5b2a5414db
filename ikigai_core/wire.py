"""Pure helpers every provider's wire format shares: base URLs, JSON pieces, error lines.

Provider plugins import this module at load time, so it stays free of network code
(``ikigai_core.transport`` does the sending).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ikigai_core.conversation import ToolCall
from ikigai_core.errors import ProviderError
from ikigai_core.strictjson import loads

MESSAGE_LIMIT = 300
"""Longest provider message quoted in one of our error lines."""


def base_url(environ: Mapping[str, str], var: str, default: str) -> str:
    """The API base URL: ``$var`` when set and not empty, else ``default``; no trailing slash."""
    return (environ.get(var) or default).rstrip("/")


def one_line(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` with its whitespace collapsed, cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def error_body_message(body: bytes) -> str | None:
    """The provider's own message in an error body, on one line, or ``None``.

    Reads ``{"error": {"message": ...}}`` (OpenAI, Anthropic, Gemini), the same inside a
    list (Gemini streams), ``{"error": "..."}`` and ``{"message": ...}``; a body that is
    not JSON is quoted as text.
    """
    try:
        data: Any = loads(body)
    except ValueError:
        text = body.decode("utf-8", "replace").strip()
        return one_line(text) if text else None
    if isinstance(data, list) and data:
        data = data[0]
    if not isinstance(data, Mapping):
        return None
    error = data.get("error", data)
    message = error.get("message") if isinstance(error, Mapping) else error
    return one_line(message) if isinstance(message, str) and message.strip() else None


def http_error_message(
    provider: Any, status: int, body: bytes, *, model: str,
    key_env: str | None = None, key_rejected: bool = False,
) -> str:
    """The standard line for an HTTP error status (``error_message`` of the providers).

    ``provider`` has a ``name`` and ``api_key_env``. ``key_rejected`` marks a status
    other than 401 that the provider uses for a bad key (Gemini answers 400
    ``API_KEY_INVALID``). The key's variable (``key_env``, the one it was read from;
    ``None`` when no key was sent) is named, never the provider's message (it may quote
    part of the key).
    """
    name = provider.name
    variables = " or ".join(provider.api_key_env)
    detail = error_body_message(body)
    if (status == 401 or key_rejected) and key_env:
        return f"Provider '{name}' rejected the API key (HTTP {status}): set a valid {key_env}"
    if status == 401 and variables:
        return f"Provider '{name}' wants an API key (HTTP 401): set {variables}"
    key_env = key_env or variables or "the API key"
    if status == 404:
        return f"Model '{model}' not found at provider '{name}' (HTTP 404): check --model"
    if status == 403:
        return (
            f"Provider '{name}' refused the request (HTTP 403): {detail or 'permission denied'}; "
            f"check that {key_env} may use model '{model}'"
        )
    if status == 400:
        return f"Provider '{name}' rejected the request (HTTP 400): {detail or 'no reason given'}"
    if status == 429:
        return (
            f"Provider '{name}' is rate limiting (HTTP 429): {detail or 'too many requests'}; "
            "try again later"
        )
    return f"Provider '{name}' failed (HTTP {status}): {detail or 'no reason given'}"


def load_object(
    provider_name: str, text: str | bytes, what: str = "stream event"
) -> dict[str, Any]:
    """The JSON object in ``text`` (a ``what`` from the provider), or a :class:`ProviderError`
    naming what was broken."""
    try:
        value = loads(text)
    except ValueError as exc:
        reason = getattr(exc, "msg", exc)
        raise ProviderError(
            f"Provider '{provider_name}' sent a broken {what} ({reason}): {_snippet(text)}"
        ) from exc
    if not isinstance(value, dict):
        raise ProviderError(
            f"Provider '{provider_name}' sent a {what} that is not a JSON object: {_snippet(text)}"
        )
    return value


def _snippet(text: str | bytes) -> str:
    return one_line(text.decode("utf-8", "replace") if isinstance(text, bytes) else text, 80)


def stream_incomplete(provider_name: str, missing: str) -> ProviderError:
    """The error for a stream that ended before its terminal event ``missing``."""
    return ProviderError(
        f"Provider '{provider_name}' ended the stream before {missing}: "
        "the response is incomplete; try again"
    )


def parse_tool_call(call_id: str, name: str, arguments: str) -> ToolCall:
    """A tool call from its JSON-text arguments; broken JSON sets ``arguments_error``.

    Empty text means no arguments (``{}``): streams of argument-less calls send none.
    """
    if not arguments.strip():
        return ToolCall(call_id, name, {})
    try:
        value = loads(arguments)
    except ValueError as exc:
        return ToolCall(call_id, name, None, f"arguments are not valid JSON ({exc})")
    if not isinstance(value, dict):
        problem = f"arguments are not a JSON object: {one_line(arguments, 80)}"
        return ToolCall(call_id, name, None, problem)
    return ToolCall(call_id, name, value)


def stream_error(provider_name: str, event: Mapping[str, Any]) -> ProviderError:
    """The error for an ``error`` event in a stream (``{"error": {"type", "message"}}``)."""
    error = event.get("error")
    if isinstance(error, Mapping):
        kind = error.get("type") or error.get("status")
        message = str(error.get("message") or "no message")
        detail = f"{kind}: {message}" if kind else message
    else:
        detail = str(error or "no message")
    return ProviderError(
        f"Provider '{provider_name}' reported an error mid-stream: {one_line(detail)}; try again"
    )
