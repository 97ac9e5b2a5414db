"""Gemini function declarations: JSON Schema into Gemini's schema subset (pure functions)."""

from __future__ import annotations

import copy

import pytest
from ikigai_provider_google import rules
from ikigai_provider_google.schema import ANY_VALUE
from ikigai_provider_google.serializer import GoogleSerializer

from ikigai_core.tools import Tool
from tests.support.schemas import BUILTIN, NESTED, NO_PARAMETERS, builtin_tool, tool

google = GoogleSerializer()


def params(parameters):
    return google.fit_tool(tool("t", parameters)).declaration.get("parameters")


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_builtin_schemas_are_already_in_the_subset(name):
    assert google.fit_tool(builtin_tool(name)).declaration == {
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
    assert google.fit_tool(tool("t", NO_PARAMETERS)).declaration == {"name": "t", "description": "The t tool"}


def test_rejected_keywords_are_removed_at_every_depth_constraints_kept_in_descriptions():
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
            "m": {"type": "object",
                  "properties": {"k": {"type": "string", "example": "a",
                                       "description": "(exclusiveMinimum: 1)"}},
                  "description": '(patternProperties: {"^x": {"type": "string"}}, '
                                 'additionalProperties: {"type": "string"})'},
            "uri": {"type": "string", "description": '(format: "uri")'},
            "when": {"type": "string", "format": "date-time"},
            "n": {"type": "number", "format": "double", "description": "(multipleOf: 2)"},
            "i": {"type": "integer", "description": '(format: "int8")'},
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
    assert tree["properties"]["children"]["items"] == {"description": "a node", **ANY_VALUE}
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
    assert props["d"] == {"anyOf": [{"type": "string"}, {"type": "boolean"}], "nullable": True,
                          "description": "(exactly one of the alternatives)"}
    assert props["e"] == {"nullable": True, **ANY_VALUE}


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
    assert props["flags"] == {"type": "boolean", "nullable": True,
                              "description": "Allowed values: true, null."}
    assert props["typed"] == {"type": "integer", "description": "Allowed values: 1, 2."}
    assert props["words"] == {"type": "string", "enum": ["a"]}


def test_boolean_and_tuple_schemas():
    schema = {"type": "object", "properties": {
        "anything": True,
        "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
        "empty": {"type": "array", "items": {"type": "string"}, "examples": []},
    }}
    props = params(schema)["properties"]
    assert props["anything"] == ANY_VALUE
    assert props["pair"] == {"type": "array", "minItems": 2, "maxItems": 2,
                             "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                             "description": "(a tuple of 2 items, in order)"}
    assert props["empty"] == {"type": "array", "items": {"type": "string"}}


# -- What Gemini rejects, rewritten or left out (issue 8) ------------------------------------


def test_an_array_needs_items_and_a_tuple_keeps_its_items():
    schema = {"type": "object", "properties": {
        "bare": {"type": "array"},
        "pair": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}],
                 "items": False},
    }}
    props = params(schema)["properties"]
    assert props["bare"] == {"type": "array", "items": ANY_VALUE}
    assert props["pair"] == {"type": "array", "items": {"type": "number"}, "minItems": 2,
                             "maxItems": 2, "description": "(a tuple of 2 items, in order)"}


def test_objects_of_any_keys_go_as_parameters_json_schema_with_every_property():
    schema = {"type": "object", "required": ["q", "body"], "properties": {
        "q": {"type": "string", "minLength": 1, "default": "x"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "opts": {"type": "object"},
        "body": {"type": "object", "description": "the payload"},
        "rows": {"type": "array", "items": {"type": "object"}},
        "kind": {"oneOf": [{"const": "a"}, {"const": True}]},
        "ref": {"allOf": [{"$ref": "#/$defs/x"}], "description": "an x"},
    }, "$defs": {"x": {"type": "object", "properties": {"v": {"type": "integer"}}}}}
    fit = google.fit_tool(tool("t", schema))
    assert "parameters" not in fit.declaration
    assert fit.declaration["parametersJsonSchema"] == {
        "type": "object", "required": ["q", "body"], "properties": {
            "q": {"type": "string", "description": '(minLength: 1, default: "x")'},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "opts": {"type": "object"},
            "body": {"type": "object", "description": "the payload"},
            "rows": {"type": "array", "items": {"type": "object"}},
            "kind": {"anyOf": [{"enum": ["a"]}, {"description": "Allowed values: true."}],
                     "description": "(exactly one of the alternatives)"},
            "ref": {"type": "object", "properties": {"v": {"type": "integer"}},
                    "description": "an x"}}}
    assert fit.changes[0] == ("sent as parametersJsonSchema: /properties/labels is an object "
                              "of any keys, which parameters cannot hold")
    assert "/properties/q: minLength, default moved into the description" in fit.changes


def test_arguments_of_any_keys_go_as_parameters_json_schema():
    fit = google.fit_tool(tool("t", {"type": "object", "additionalProperties": {"type": "string"}}))
    assert fit.declaration["parametersJsonSchema"] == {
        "type": "object", "additionalProperties": {"type": "string"}}
    assert fit.changes == ("sent as parametersJsonSchema: the arguments are an object of any keys",)


def test_the_rules_of_parameters_json_schema():
    def found(schema, **extra):
        return rules.problems({"name": "t", "parametersJsonSchema": schema, **extra})
    assert found({"type": "object"}, parameters={"type": "object"}) == [
        "parameters and parametersJsonSchema cannot both be given"]
    assert found({"type": "string"}) == ["parametersJsonSchema must be a schema of type object"]
    assert found({"type": "object", "properties": {
        "a": {"type": "string", "minLength": 1}, "b": {"enum": [True]},
        "c": {"$ref": "#/$defs/c", "description": "d"}, "d": True,
        "e": {"type": "array", "items": [{}]}}}) == [
        "/properties/e: items is not draft 2020-12",
        "/properties/a: not read by Gemini: minLength",
        "/properties/b: enum holds strings and numbers only",
        "/properties/c: $ref cannot have keywords beside it"]


def test_every_node_gets_a_type_and_enums_hold_strings():
    schema = {"type": "object", "properties": {
        "obj": {"properties": {"a": {"type": "string"}}},
        "list": {"items": {"type": "string"}},
        "any": {"description": "whatever"},
        "num": {"type": "integer", "enum": [1, 2]},
    }}
    props = params(schema)["properties"]
    assert props["obj"]["type"] == "object" and props["list"]["type"] == "array"
    assert props["any"] == {"description": "whatever", **ANY_VALUE}
    assert props["num"] == {"type": "integer", "description": "Allowed values: 1, 2."}


@pytest.mark.parametrize("name, ok", [("9lives", False), ("-x", False), ("_ok", True),
                                      ("a.b:c-d", True)])
def test_a_function_name_must_start_with_a_letter_or_underscore(name, ok):
    fit = google.fit_tool(Tool(name, "d", NO_PARAMETERS, ("/bin/true",), "test"))
    assert (fit.declaration is not None) is ok
    if not ok:
        assert fit.reason.startswith("the name must start with a letter or _")
