"""What the real APIs refuse in a request: the fake server (``tests/support``'s, and
:class:`~pytest_ikigai.model.FakeModel`) answers such a request with the API's 400 instead of
its scripted reply (issue 22), so a test passes only when what ikigai sends would be
accepted.

- Gemini (``/v1beta/models/M:generateContent`` and its stream): each ``functionDeclaration`` by its
  documented rules (``ikigai_provider_google/rules.py``, each with its link), and a
  ``parametersJsonSchema`` must be valid JSON Schema 2020-12;
- Anthropic (``/v1/messages``) and OpenAI (``/chat/completions``, ``/responses``): each tool's
  schema must be valid JSON Schema 2020-12, as the APIs check it ("input_schema: JSON schema
  is invalid. It must match JSON Schema draft 2020-12"; "Invalid schema for function 'f':
  [...] is not of type 'object', 'boolean'");
- OpenAI Responses, stateless: each ``function_call_output`` answers a ``function_call`` of
  the same ``call_id`` earlier in ``input`` ("No tool call found for function call output
  with call_id X.");
- Anthropic extended thinking (the guide's "Extended thinking" constraints):
  ``budget_tokens`` at least 1,024 and less than ``max_tokens``; no ``temperature`` but 1,
  no ``top_k``.

The Gemini rules are the Google provider's own (``ikigai_provider_google/rules.py``): where
it is not installed, Gemini declarations are checked as JSON Schema only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from jsonschema.validators import Draft202012Validator

from pytest_ikigai.fakeserver import RecordedRequest, Reply
from pytest_ikigai.replies import REPLIES

_META = Draft202012Validator(Draft202012Validator.META_SCHEMA)


def refusal(request: RecordedRequest) -> Reply | None:
    """The API's 400 for ``request`` when its tools break the API's rules, else ``None``."""
    body = request.json
    if not isinstance(body, Mapping):
        return None
    if request.path.endswith("/responses") and (unanswered := _unanswered(body)):
        return REPLIES["openai"].error(400, unanswered[0])
    if request.path.endswith("/v1/messages") and (unthinkable := _thinking(body)):
        return REPLIES["anthropic"].error(400, unthinkable[0])
    if not isinstance(body.get("tools"), list):
        return None
    for provider, (markers, problems) in _CHECKS.items():
        if any(marker in request.path for marker in markers):
            found = problems(body["tools"])
            return REPLIES[provider].error(400, found[0]) if found else None
    return None


def _not_2020_12(where: str, schema: Any) -> list[str]:
    return [f"{where}: JSON schema is invalid. It must match JSON Schema draft 2020-12: "
            f"{error.message}" for error in _META.iter_errors(schema)][:1]


def _gemini(tools: Iterable[Mapping[str, Any]]) -> list[str]:
    found = []
    for tool in tools:
        for declaration in tool.get("functionDeclarations") or ():
            name = declaration.get("name")
            found += [f"function {name}: {problem}" for problem in _google_rules(declaration)]
            if "parametersJsonSchema" in declaration:
                found += _not_2020_12(f"function {name}", declaration["parametersJsonSchema"])
    return found


def _google_rules(declaration: Mapping[str, Any]) -> list[str]:
    """The Google provider's rules for one declaration (none where it is not installed)."""
    try:
        from ikigai_provider_google import rules
    except ImportError:
        return []
    return list(rules.problems(declaration))


def _thinking(body: Mapping[str, Any]) -> list[str]:
    """What the Messages API refuses in a request with extended thinking."""
    thinking = body.get("thinking")
    if not isinstance(thinking, Mapping) or thinking.get("type") != "enabled":
        return []
    budget, most = thinking.get("budget_tokens"), body.get("max_tokens")
    found = []
    if not isinstance(budget, int) or budget < 1024:
        found.append("thinking.enabled.budget_tokens: Input should be greater than or "
                     "equal to 1024")
    elif not isinstance(most, int) or budget >= most:
        found.append("`max_tokens` must be greater than `thinking.budget_tokens`")
    if body.get("temperature", 1) != 1:
        found.append("`temperature` may only be set to 1 when thinking is enabled")
    if "top_k" in body:
        found.append("`top_k` is not compatible with thinking")
    return found


def _anthropic(tools: Iterable[Mapping[str, Any]]) -> list[str]:
    return [problem for i, tool in enumerate(tools) for problem in
            _not_2020_12(f"tools.{i}.custom.input_schema", tool.get("input_schema", {}))]


def _openai(tools: Iterable[Mapping[str, Any]]) -> list[str]:
    functions = [tool.get("function") or tool for tool in tools]  # Responses tools are flat
    return [problem for function in functions for problem in _not_2020_12(
        f"Invalid schema for function '{function.get('name')}'", function.get("parameters", {}))]


def _unanswered(body: Mapping[str, Any]) -> list[str]:
    """The ``function_call_output`` items of a stateless Responses request with no call."""
    if body.get("previous_response_id"):
        return []
    items = [item for item in body.get("input") or () if isinstance(item, Mapping)]
    called = {item.get("call_id") for item in items if item.get("type") == "function_call"}
    return [f"No tool call found for function call output with call_id {item.get('call_id')}."
            for item in items
            if item.get("type") == "function_call_output" and item.get("call_id") not in called]


_CHECKS: dict[str, tuple[tuple[str, ...], Callable[[Iterable[Mapping[str, Any]]], list[str]]]] = {
    "google": (("/v1beta/models/",), _gemini),
    "anthropic": (("/v1/messages",), _anthropic),
    "openai": (("/chat/completions", "/responses"), _openai),
}
"""Per provider: what its request paths contain, and the problems of its ``tools``."""
