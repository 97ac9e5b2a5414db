"""Gemini function declarations: JSON Schema into Gemini's schema subset (pure functions)."""

from __future__ import annotations

import copy

import pytest

from ikigai_provider_google.serializer import GoogleSerializer
from tests.support.schemas import BUILTIN, NESTED, NO_PARAMETERS, builtin_tool, tool

google = GoogleSerializer()


def params(parameters):
    return google.tool_schema(tool("t", parameters)).get("parameters")


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_builtin_schemas_are_already_in_the_subset(name):
    assert google.tool_schema(builtin_tool(name)) == {
        "name": name, "description": BUILTIN[name]["description"],
        "parameters": BUILTIN[name]["parameters"],
    }


def test_nested_optional_enum_and_array_of_objects():
    before = copy.deepcopy(NESTED)
    out = params(NESTED)
    assert NESTED == before, "the input is not changed"
    assert out["required"] == ["target", "steps"]
    assert out["properties"]["target"] == {
        "type": "object", "description": "Where to deploy",
        "properties": {"host": {"type": "string"},
                       "port": {"type": "integer", "minimum": 1, "maximum": 65535},
                       "tls": {"type": "object", "properties": {"verify": {"type": "boolean"}}}},
        "required": ["host"],
    }
    assert out["properties"]["mode"] == {"type": "string", "enum": ["fast", "safe"],
                                         "description": "Deploy mode"}
    assert out["properties"]["steps"]["items"]["required"] == ["name"]
    assert out["properties"]["steps"]["minItems"] == 1
    assert out["properties"]["level"] == {"type": "integer", "description": "Allowed values: 1, 2, 3."}
    assert out["properties"]["note"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}


def test_no_parameters_leaves_parameters_out():
    assert google.tool_schema(tool("t", NO_PARAMETERS)) == {"name": "t", "description": "The t tool"}


def test_rejected_keywords_are_removed_at_every_depth():
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "urn:x",
        "type": "object", "additionalProperties": False,
        "properties": {
            "m": {"type": "object", "additionalProperties": {"type": "string"},
                  "patternProperties": {"^x": {"type": "string"}},
                  "properties": {"k": {"type": "string", "exclusiveMinimum": 1,
                                       "$comment": "c", "examples": ["a", "b"]}}},
            "uri": {"type": "string", "format": "uri"},
            "when": {"type": "string", "format": "date-time"},
            "n": {"type": "number", "format": "double", "multipleOf": 2},
            "i": {"type": "integer", "format": "int8"},
        },
        "required": ["m", "ghost"],
    }
    assert params(schema) == {
        "type": "object",
        "properties": {
            "m": {"type": "object", "properties": {"k": {"type": "string", "example": "a"}}},
            "uri": {"type": "string"},
            "when": {"type": "string", "format": "date-time"},
            "n": {"type": "number", "format": "double"},
            "i": {"type": "integer"},
        },
        "required": ["m"],
    }


def test_refs_are_inlined_and_recursion_is_cut():
    schema = {
        "type": "object",
        "properties": {
            "tree": {"$ref": "#/$defs/node"},
            "described": {"allOf": [{"$ref": "#/definitions/leaf"}], "description": "one leaf"},
        },
        "$defs": {"node": {"type": "object", "description": "a node", "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
        "definitions": {"leaf": {"type": "object", "properties": {"v": {"type": "string"}},
                                 "required": ["v"]}},
    }
    out = params(schema)
    tree = out["properties"]["tree"]
    assert tree["properties"]["children"]["items"] == {"description": "a node"}
    assert out["properties"]["described"] == {
        "type": "object", "description": "one leaf",
        "properties": {"v": {"type": "string"}}, "required": ["v"],
    }
    assert "$defs" not in out and "definitions" not in out


def test_nullable_forms():
    schema = {"type": "object", "properties": {
        "a": {"type": ["string", "null"]},
        "b": {"anyOf": [{"type": "integer"}, {"type": "null"}], "description": "b"},
        "c": {"type": ["string", "integer"]},
        "d": {"oneOf": [{"type": "string"}, {"type": "boolean"}, {"type": "null"}]},
        "e": {"type": ["null"]},
    }}
    props = params(schema)["properties"]
    assert props["a"] == {"type": "string", "nullable": True}
    assert props["b"] == {"type": "integer", "nullable": True, "description": "b"}
    assert props["c"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert props["d"] == {"anyOf": [{"type": "string"}, {"type": "boolean"}], "nullable": True}
    assert props["e"] == {"nullable": True}


def test_const_and_enums():
    schema = {"type": "object", "properties": {
        "s": {"const": "only"},
        "n": {"const": 3, "description": "Three."},
        "mixed": {"enum": [1, 2.5]},
        "flags": {"enum": [True, None]},
        "typed": {"type": "integer", "enum": [1, 2]},
        "words": {"type": "string", "enum": ["a"]},
    }}
    props = params(schema)["properties"]
    assert props["s"] == {"type": "string", "enum": ["only"]}
    assert props["n"] == {"type": "integer", "description": "Three. Allowed values: 3."}
    assert props["mixed"] == {"type": "number", "description": "Allowed values: 1, 2.5."}
    assert props["flags"] == {"description": "Allowed values: true, null."}
    assert props["typed"] == {"type": "integer", "description": "Allowed values: 1, 2."}
    assert props["words"] == {"type": "string", "enum": ["a"]}


def test_boolean_and_tuple_schemas():
    schema = {"type": "object", "properties": {
        "anything": True,
        "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
        "empty": {"type": "array", "items": {"type": "string"}, "examples": []},
    }}
    props = params(schema)["properties"]
    assert props["anything"] == {}
    assert props["pair"] == {"type": "array",
                             "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}
    assert props["empty"] == {"type": "array", "items": {"type": "string"}}
