"""Anthropic reads ``input_schema`` as JSON Schema draft 2020-12: draft-07 forms are rewritten
to theirs, with the same meaning (issue 22)."""

from __future__ import annotations

from ikigai_provider_anthropic import rules
from ikigai_provider_anthropic.serializer import AnthropicSerializer

from tests.support.schemas import tool

anthropic = AnthropicSerializer()


def sent(parameters):
    fit = anthropic.fit_tool(tool("t", parameters))
    return fit.declaration["input_schema"], fit.changes


def test_zods_tuple_becomes_prefix_items():
    schema, changes = sent({"type": "object", "properties": {"at": {
        "type": "array", "minItems": 2, "maxItems": 2,
        "items": [{"type": "number"}, {"type": "number"}]}}, "required": ["at"]})
    assert schema["properties"]["at"] == {"type": "array", "minItems": 2, "maxItems": 2,
                                          "prefixItems": [{"type": "number"}, {"type": "number"}]}
    assert changes == ("/properties/at: items list sent as prefixItems (draft 2020-12)",)


def test_additional_items_becomes_items():
    schema, _ = sent({"type": "object", "properties": {
        "closed": {"type": "array", "items": [{"type": "string"}], "additionalItems": False},
        "open": {"type": "array", "items": [{"type": "string"}],
                 "additionalItems": {"type": "integer"}},
        "plain": {"type": "array", "items": {"type": "string"}, "additionalItems": False}}})
    assert schema["properties"] == {
        "closed": {"type": "array", "prefixItems": [{"type": "string"}], "items": False},
        "open": {"type": "array", "prefixItems": [{"type": "string"}],
                 "items": {"type": "integer"}},
        "plain": {"type": "array", "items": {"type": "string"}}}


def test_definitions_become_defs_and_every_reference_follows():
    schema, changes = sent({
        "$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
        "definitions": {"user": {"type": "object", "properties": {"name": {"type": "string"}},
                                 "definitions": {"id": {"type": "integer"}}}},
        "properties": {"owner": {"$ref": "#/definitions/user"},
                       "id": {"$ref": "#/definitions/user/definitions/id"},
                       "definitions": {"type": "string"},
                       "again": {"$ref": "#/properties/definitions"}}})
    assert schema == {
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "$defs": {"user": {"type": "object", "properties": {"name": {"type": "string"}},
                           "$defs": {"id": {"type": "integer"}}}},
        "properties": {"owner": {"$ref": "#/$defs/user"},
                       "id": {"$ref": "#/$defs/user/$defs/id"},
                       "definitions": {"type": "string"},
                       "again": {"$ref": "#/properties/definitions"}}}
    assert "/: $schema http://json-schema.org/draft-07/schema# sent as " \
           "https://json-schema.org/draft/2020-12/schema" in changes


def test_dependencies_split_into_required_and_schemas():
    schema, _ = sent({"type": "object", "properties": {"a": {}, "b": {}}, "dependencies": {
        "a": ["b"], "b": {"required": ["a"]}}})
    assert schema["dependentRequired"] == {"a": ["b"]}
    assert schema["dependentSchemas"] == {"b": {"required": ["a"]}}
    assert "dependencies" not in schema


def test_draft_04_exclusive_bounds_take_their_numbers():
    schema, _ = sent({"type": "object", "properties": {
        "n": {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 9,
              "exclusiveMaximum": False}}})
    assert schema["properties"]["n"] == {"type": "number", "exclusiveMinimum": 0, "maximum": 9}


def test_the_rules_name_draft_07_forms():
    assert rules.problems({"name": "t", "input_schema": {
        "type": "object", "properties": {"p": {"type": "array", "items": [{}]}}}}) == [
        "/properties/p: items is not draft 2020-12"]


def test_a_schema_already_in_2020_12_goes_as_is():
    parameters = {"type": "object", "$defs": {"x": {"type": "string"}},
                  "properties": {"p": {"$ref": "#/$defs/x"}, "q": {
                      "type": "array", "prefixItems": [{"type": "string"}], "items": False}}}
    fit = anthropic.fit_tool(tool("t", parameters))
    assert fit.status == "as is" and fit.declaration["input_schema"] == parameters
