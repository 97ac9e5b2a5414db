"""OpenAI strict-mode tool schemas and the nulls they make the model send (pure functions)."""

from __future__ import annotations

import copy

import jsonschema
import pytest

from ikigai_provider_openai.serializer import OpenAISerializer
from tests.support.schemas import BUILTIN, NESTED, NO_PARAMETERS, builtin_tool, tool

openai = OpenAISerializer()


def declared(parameters, name="t"):
    return openai.tool_schema(tool(name, parameters))["function"]


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_every_builtin_tool_is_strict(name):
    original = BUILTIN[name]["parameters"]
    function = openai.tool_schema(builtin_tool(name))["function"]
    params = function["parameters"]
    assert function["strict"] is True
    assert function["name"] == name
    assert function["description"] == BUILTIN[name]["description"]
    assert params["additionalProperties"] is False
    assert params["required"] == list(original["properties"])
    for prop, schema in original["properties"].items():
        if prop in original["required"]:
            assert params["properties"][prop] == schema
        else:
            assert params["properties"][prop] == {**schema, "type": [schema["type"], "null"]}


def test_file_read_exactly():
    assert openai.tool_schema(builtin_tool("file_read")) == {"type": "function", "function": {
        "name": "file_read",
        "description": "Read contents of a file",
        "parameters": {
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Absolute or relative path to file"},
                "offset": {"type": ["integer", "null"],
                           "description": "Line number to start reading from (1-based)"},
                "limit": {"type": ["integer", "null"], "description": "Number of lines to read"},
            },
            "required": ["file_path", "offset", "limit"],
            "additionalProperties": False,
        },
        "strict": True,
    }}


def test_nested_optional_enum_and_array_of_objects():
    params = declared(NESTED)["parameters"]
    target = params["properties"]["target"]
    assert target["required"] == ["host", "port", "tls"]
    assert target["properties"]["port"] == {"type": ["integer", "null"], "minimum": 1, "maximum": 65535}
    assert target["properties"]["tls"] == {"anyOf": [
        {"type": "object", "properties": {"verify": {"type": ["boolean", "null"]}},
         "required": ["verify"], "additionalProperties": False},
        {"type": "null"},
    ]}
    assert params["properties"]["mode"] == {
        "type": ["string", "null"], "enum": ["fast", "safe", None], "description": "Deploy mode"
    }
    step = params["properties"]["steps"]["items"]
    assert step["required"] == ["name", "retries", "env"] and step["additionalProperties"] is False
    assert step["properties"]["env"] == {
        "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]
    }
    assert params["properties"]["level"] == {"anyOf": [{"enum": [1, 2, 3]}, {"type": "null"}]}
    assert params["properties"]["note"] == {
        "anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]
    }
    assert params["required"] == ["target", "mode", "steps", "level", "note"]


def test_the_input_schema_is_not_modified():
    before = copy.deepcopy(NESTED)
    declared(NESTED)
    assert NESTED == before


def test_no_parameters_is_an_empty_strict_object():
    assert declared(NO_PARAMETERS) == {
        "name": "t", "description": "The t tool", "strict": True,
        "parameters": {"type": "object", "properties": {}, "required": [],
                       "additionalProperties": False},
    }


def test_refs_stay_and_definitions_become_strict():
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/point"}, "b": {"$ref": "#/$defs/point"}},
        "required": ["a"],
        "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}}}},
    }
    params = declared(schema)["parameters"]
    assert "$schema" not in params
    assert params["properties"] == {
        "a": {"$ref": "#/$defs/point"},
        "b": {"anyOf": [{"$ref": "#/$defs/point"}, {"type": "null"}]},
    }
    assert params["$defs"]["point"] == {
        "type": "object", "properties": {"x": {"type": ["number", "null"]}},
        "required": ["x"], "additionalProperties": False,
    }


def test_optional_nullable_forms():
    schema = {"type": "object", "properties": {
        "already": {"type": ["string", "null"]},
        "either": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "d"},
        "multi": {"type": ["string", "integer"]},
        "fixed": {"const": "x"},
        "obj_or_str": {"type": ["object", "string"], "properties": {}},
    }}
    props = declared(schema)["parameters"]["properties"]
    assert props["already"] == {"type": ["string", "null"]}
    assert props["either"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "d"}
    assert props["multi"] == {"type": ["string", "integer", "null"]}
    assert props["fixed"] == {"anyOf": [{"const": "x"}, {"type": "null"}]}
    assert props["obj_or_str"]["anyOf"][1] == {"type": "null"}


@pytest.mark.parametrize("parameters", [
    {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True},
    {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}},
    {"type": "object", "properties": {"m": {"type": "object"}}},
    {"type": "object", "properties": {"a": {"type": "string", "default": "x"}}},
    {"type": "object", "properties": {"a": {"type": "string", "minLength": 2}}},
    {"type": "object", "properties": {"a": {"type": "object", "properties": {},
                                            "patternProperties": {"^x": {"type": "string"}}}}},
    {"type": "object", "properties": {"a": {"allOf": [{"type": "string"}]}}},
    {"type": "object", "properties": {"a": {"description": "anything"}}},
    {"type": "object", "properties": {"a": True}},
    {"type": "object", "properties": {"a": {"type": "array", "items": [{"type": "string"}]}}},
    {"anyOf": [{"type": "object", "properties": {}}]},
])
def test_schemas_that_cannot_be_strict_are_sent_unchanged(parameters):
    function = declared(parameters)
    assert function["strict"] is False
    assert function["parameters"] == parameters


# -- Dropping the nulls strict mode asked for --------------------------------


def prepare(parameters, arguments):
    return openai.prepare_arguments(tool("t", parameters), arguments)


def test_nulls_for_optional_builtin_arguments_are_dropped():
    params = BUILTIN["file_read"]["parameters"]
    assert prepare(params, {"file_path": "a", "offset": None, "limit": 3}) == {
        "file_path": "a", "limit": 3
    }


def test_nulls_are_dropped_at_every_depth():
    arguments = {
        "target": {"host": "h", "port": None, "tls": {"verify": None}},
        "mode": None,
        "steps": [{"name": "a", "retries": None, "env": None}, {"name": "b", "retries": 2,
                                                                 "env": ["X=1"]}],
        "level": None,
        "note": None,
    }
    assert prepare(NESTED, arguments) == {
        "target": {"host": "h", "tls": {}},
        "steps": [{"name": "a"}, {"name": "b", "retries": 2, "env": ["X=1"]}],
    }


def test_prepared_arguments_fit_the_original_schema():
    """What the strict schema allows, once prepared, is valid for the tool's own schema."""
    strict = declared(NESTED)["parameters"]
    arguments = {
        "target": {"host": "h", "port": None, "tls": None}, "mode": None,
        "steps": [{"name": "a", "retries": None, "env": None}], "level": None, "note": None,
    }
    jsonschema.validate(arguments, strict)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(arguments, NESTED)
    jsonschema.validate(prepare(NESTED, arguments), NESTED)


def test_nulls_the_tool_accepts_or_requires_are_kept():
    schema = {"type": "object", "required": ["must"], "properties": {
        "must": {"type": "string"},
        "nullable": {"type": ["string", "null"]},
        "enum_null": {"enum": ["a", None]},
        "const_null": {"const": None},
        "union": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "free": {},
        "enum_no_null": {"enum": ["a"]},
        "const_x": {"const": "x"},
        "union_no_null": {"oneOf": [{"type": "integer"}]},
    }}
    arguments = {key: None for key in schema["properties"]} | {"unknown": None}
    assert prepare(schema, arguments) == {
        "must": None, "nullable": None, "enum_null": None, "const_null": None,
        "union": None, "free": None, "unknown": None,
    }


def test_nulls_dropped_through_refs_and_anyof_objects():
    schema = {
        "type": "object",
        "properties": {
            "p": {"$ref": "#/$defs/point"},
            "q": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/point"}]},
            "r": {"$ref": "#/$defs/missing"},
            "free": {"anyOf": [{"type": "object"}, {"type": "string"}]},
            "loop": {"$ref": "#/$defs/loop"},
        },
        "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"},
                                                              "y": {"type": "number"}}},
                  "loop": {"$ref": "#/$defs/loop"}},
    }
    arguments = {"loop": None, "p": {"x": 1, "y": None}, "q": {"x": None}, "r": None, "s": 1,
                 "free": {"k": None}}
    assert prepare(schema, arguments) == {
        "loop": None, "p": {"x": 1}, "q": {}, "r": None, "s": 1, "free": {"k": None}
    }
