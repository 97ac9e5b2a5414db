"""Every real-world schema in tests/corpus/ reaches every provider in a form its API accepts,
or is left out of that provider's requests with a reason; meaning is kept (issue 8)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from ikigai_provider_anthropic import rules as anthropic_rules
from ikigai_provider_google import rules as google_rules
from ikigai_provider_openai import rules as openai_rules
from jsonschema.validators import Draft202012Validator

from ikigai_core.plugins import get_plugin_manager
from ikigai_core.providers import collect_providers
from ikigai_core.schema_tools import walk
from tests.support.corpus import corpus, corpus_files, corpus_tool

PROVIDERS = collect_providers(get_plugin_manager())
RULES = {"openai": openai_rules, "anthropic": anthropic_rules, "google": google_rules}
CORPUS = dict(corpus())
EXCLUDED = {
    "openai": set(),
    "anthropic": {"json_schema_2020_12/list_drive_items"},
    "google": set(),
}
"""What cannot be sent, and stays so: OData keys ($top) for Anthropic."""


def test_the_corpus_is_real_and_says_where_it_came_from():
    sources = {path.stem: json.loads(path.read_text())["source"] for path in corpus_files()}
    assert {"pydantic_v2", "zod_to_json_schema", "json_schema_2020_12", "json_schema_draft_07",
            "mcp_servers"} <= set(sources)
    assert all(sources.values())
    servers = {ident.split("/")[1] for ident in CORPUS if ident.startswith("mcp_servers/")}
    assert {"time", "git", "fetch", "everything"} <= servers


def parameters_of(provider: str, declaration: Mapping[str, Any]) -> Mapping[str, Any]:
    if provider == "openai":
        return declaration["function"]["parameters"]
    if provider == "anthropic":
        return declaration["input_schema"]
    return declaration.get("parameters") or declaration.get("parametersJsonSchema") or {}


@pytest.mark.parametrize("provider", sorted(RULES))
@pytest.mark.parametrize("ident", sorted(CORPUS))
def test_each_schema_goes_in_a_form_the_api_accepts_or_is_left_out(provider, ident):
    original = CORPUS[ident]
    before = json.dumps(original, sort_keys=True)
    fit = PROVIDERS[provider].fit_tool(corpus_tool(ident, original))
    assert json.dumps(original, sort_keys=True) == before, "the tool's schema is not changed"
    if ident in EXCLUDED[provider]:
        assert fit.declaration is None and fit.reason
        return
    assert fit.declaration is not None, fit.reason
    assert RULES[provider].problems(fit.declaration) == []
    assert (fit.status == "as is") == (not fit.changes)
    sent = parameters_of(provider, fit.declaration)
    text = json.dumps(sent, ensure_ascii=False)
    required = set(original.get("required") or ())
    assert required <= set(sent.get("required") or ()), "required stays required"
    for path, node, _ in walk(original):
        if isinstance(node, Mapping):
            for value in node.get("enum") or ():
                assert json.dumps(value) in text or str(value) in text, f"{path}: enum {value}"
    for name, node in (original.get("properties") or {}).items():
        description = node.get("description") if isinstance(node, Mapping) else None
        if name in (sent.get("properties") or {}) and description:
            assert json.dumps(description)[1:-1] in text, f"{name}: its description"


@pytest.mark.parametrize("provider", sorted(RULES))
@pytest.mark.parametrize("ident", sorted(CORPUS))
def test_no_property_is_lost(provider, ident):
    """Every property goes, and a map (additionalProperties) stays one: pydantic's dict[str, X],
    zod's z.record, a free-form object (issue 22: Gemini dropped them)."""
    original = CORPUS[ident]
    fit = PROVIDERS[provider].fit_tool(corpus_tool(ident, original))
    if fit.declaration is None:
        return
    sent = parameters_of(provider, fit.declaration)
    assert set(original.get("properties") or ()) <= set(sent.get("properties") or ())
    for name, node in (original.get("properties") or {}).items():
        if isinstance(node, Mapping) and isinstance(node.get("additionalProperties"), Mapping):
            assert sent["properties"][name].get("additionalProperties") is not None, name


@pytest.mark.parametrize("ident, name", [
    ("pydantic_v2/PlaceOrder", "metadata"), ("pydantic_v2/Ticket", "extra"),
    ("zod_to_json_schema/search_issues", "extra"), ("json_schema_2020_12/freeform", "env"),
    ("json_schema_2020_12/freeform", "meta"), ("zod_to_json_schema/http_request", "headers"),
])
def test_gemini_takes_free_form_objects_as_json_schema(ident, name):
    fit = PROVIDERS["google"].fit_tool(corpus_tool(ident, CORPUS[ident]))
    sent = fit.declaration["parametersJsonSchema"]["properties"][name]
    assert "object" in json.dumps(sent) and "parameters" not in fit.declaration
    assert fit.changes[0].startswith("sent as parametersJsonSchema: ")


def json_schema_sent(provider: str, declaration: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The parameters as the API reads them as JSON Schema; ``None`` for Gemini's
    ``parameters``, its OpenAPI ``Schema`` object."""
    if provider == "google":
        return declaration.get("parametersJsonSchema")
    return parameters_of(provider, declaration)


@pytest.mark.parametrize("provider", sorted(RULES))
@pytest.mark.parametrize("ident", sorted(CORPUS))
def test_what_goes_as_json_schema_is_draft_2020_12(provider, ident):
    """Anthropic, OpenAI and Gemini's parametersJsonSchema read draft 2020-12 (issue 22):
    draft-07's tuple, definitions, dependencies and additionalItems are rewritten."""
    fit = PROVIDERS[provider].fit_tool(corpus_tool(ident, CORPUS[ident]))
    sent = fit.declaration and json_schema_sent(provider, fit.declaration)
    if not sent:
        return
    Draft202012Validator.check_schema(sent)
    for path, node, _ in walk(sent):
        if isinstance(node, Mapping):
            assert not {"definitions", "dependencies", "additionalItems"} & set(node), path
            assert not isinstance(node.get("items"), list), f"{path}: a draft-07 tuple"


def test_openai_keeps_strict_mode_for_most_of_the_corpus():
    openai = PROVIDERS["openai"]
    strict = [ident for ident, schema in CORPUS.items()
              if openai.fit_tool(corpus_tool(ident, schema)).declaration["function"]["strict"]]
    assert len(strict) >= len(CORPUS) - 12, sorted(set(CORPUS) - set(strict))
    assert "mcp_servers/fetch/fetch" in strict  # default, minLength, format "uri"
    assert "pydantic_v2/CreateContact" in strict  # $ref with a description beside it
