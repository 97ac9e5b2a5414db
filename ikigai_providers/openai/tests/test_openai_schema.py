"""OpenAI strict-mode tool schemas and the nulls they make the model send (pure functions)."""

from __future__ import annotations

import copy

import jsonschema
import pytest
from ikigai_provider_openai.serializer import OpenAISerializer

from ikigai_core.tools import Tool
from tests.support.schemas import BUILTIN, NESTED, NO_PARAMETERS, builtin_tool, tool

openai = OpenAISerializer()


def declared(parameters, name="t"):
    return openai.fit_tool(tool(name, parameters)).declaration["function"]


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_every_builtin_tool_is_strict(name):
    original = BUILTIN[name]["parameters"]
    function = openai.fit_tool(builtin_tool(name)).declaration["function"]
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
    assert openai.fit_tool(builtin_tool("file_read")).declaration == {"type": "function", "function": {
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
    assert params["properties"]["level"] == {"type": ["integer", "null"], "enum": [1, 2, 3, None]}
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
    assert props["fixed"] == {"anyOf": [{"const": "x", "type": "string"}, {"type": "null"}]}
    assert props["obj_or_str"]["anyOf"][1] == {"type": "null"}


@pytest.mark.parametrize("parameters", [
    {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}},
    {"type": "object", "properties": {"m": {"type": "object"}}},
    {"type": "object", "properties": {"a": {"type": "object", "properties": {},
                                            "patternProperties": {"^x": {"type": "string"}}}}},
    {"type": "object", "properties": {"a": {"description": "anything"}}},
    {"type": "object", "properties": {"a": True}},
    {"type": "object", "properties": {"a": {}}},
    {"type": "object", "properties": {"a": {"type": "array", "prefixItems": [{"type": "string"}],
                                            "items": {"type": "string"}}}},
])
def test_schemas_that_cannot_be_strict_are_sent_unchanged(parameters):
    fit = openai.fit_tool(tool("t", parameters))
    assert fit.declaration["function"]["strict"] is False
    assert fit.declaration["function"]["parameters"] == parameters
    assert fit.changes[0].startswith("sent with strict: false: ")


def test_an_array_without_items_gets_items_even_without_strict_mode():
    """The API answers "array schema missing items" even with strict: false."""
    parameters = {"type": "object", "properties": {"xs": {"type": "array"}, "m": {}}}
    fit = openai.fit_tool(tool("t", parameters))
    function = fit.declaration["function"]
    assert function["strict"] is False
    assert function["parameters"]["properties"] == {"xs": {"type": "array", "items": {}}, "m": {}}
    assert fit.changes == ("sent with strict: false: /properties/xs is an array of any values",
                           "/properties/xs: items: {} added (an array must say what it holds)")


# -- What strict mode rejects, rewritten so strict mode stays (issue 8) ----------------------


def test_a_ref_with_keywords_beside_it_is_inlined():
    """pydantic's Field(description=...) on a model field; the API: "$ref cannot have keywords"."""
    schema = {
        "type": "object",
        "properties": {"home": {"$ref": "#/$defs/Address", "description": "Home address"},
                       "work": {"$ref": "#/$defs/Address"}},
        "required": ["home"],
        "$defs": {"Address": {"type": "object", "properties": {"city": {"type": "string"}},
                              "required": ["city"]}},
    }
    function = declared(schema)
    assert function["strict"] is True
    assert function["parameters"]["properties"]["home"] == {
        "type": "object", "description": "Home address", "properties": {"city": {"type": "string"}},
        "required": ["city"], "additionalProperties": False,
    }
    assert function["parameters"]["properties"]["work"] == {
        "anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]}


def test_formats_outside_the_documented_set_move_into_the_description():
    schema = {"type": "object", "required": ["url", "when"], "properties": {
        "url": {"type": "string", "format": "uri", "description": "Page"},
        "when": {"type": "string", "format": "date-time"},
    }}
    function = declared(schema)
    assert function["strict"] is True
    assert function["parameters"]["properties"] == {
        "url": {"type": "string", "description": 'Page (format: "uri")'},
        "when": {"type": "string", "format": "date-time"},
    }


def test_nodes_without_a_type_get_one_from_their_values():
    schema = {"type": "object", "required": ["e", "c", "n", "mixed"], "properties": {
        "e": {"enum": ["a", "b"]}, "c": {"const": "v1"}, "n": {"enum": [1, 2.5]},
        "mixed": {"enum": ["a", 1, None]},
    }}
    function = declared(schema)
    assert function["strict"] is True
    assert function["parameters"]["properties"] == {
        "e": {"enum": ["a", "b"], "type": "string"}, "c": {"const": "v1", "type": "string"},
        "n": {"enum": [1, 2.5], "type": "number"},
        "mixed": {"enum": ["a", 1, None], "type": ["string", "integer", "null"]},
    }


def test_additional_properties_true_is_made_false_and_strict_kept():
    """Spec decision 15: every object at every depth gets additionalProperties: false."""
    schema = {"type": "object", "properties": {"a": {"type": "string"}},
              "additionalProperties": True, "required": ["a"]}
    fit = openai.fit_tool(tool("t", schema))
    assert fit.declaration["function"]["strict"] is True
    assert fit.declaration["function"]["parameters"]["additionalProperties"] is False
    assert any("additionalProperties: false" in change for change in fit.changes)


def test_constraints_strict_mode_lacks_move_into_the_description_and_strict_stays():
    schema = {"type": "object", "required": ["name"], "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 200, "description": "Full name"},
        "limit": {"type": "integer", "default": 20, "minimum": 1},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "maybe": {"type": ["string", "null"], "default": None},
    }}
    function = declared(schema)
    assert function["strict"] is True
    props = function["parameters"]["properties"]
    assert props["name"] == {"type": "string",
                             "description": "Full name (minLength: 1, maxLength: 200)"}
    assert props["limit"] == {"type": ["integer", "null"], "minimum": 1,
                              "description": "(default: 20)"}
    assert props["tags"]["anyOf"][0]["description"] == "(uniqueItems: true)"
    assert props["maybe"] == {"type": ["string", "null"]}  # default null: nothing to say


def test_one_of_is_sent_as_any_of_and_all_of_merged():
    schema = {"type": "object", "required": ["pet", "both"], "properties": {
        "pet": {"oneOf": [{"type": "string"}, {"type": "integer"}], "discriminator": {}},
        "both": {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}},
                           {"properties": {"b": {"type": "string"}}, "required": ["b"]}]},
    }}
    props = declared(schema)["parameters"]["properties"]
    assert props["pet"] == {"anyOf": [{"type": "string"}, {"type": "integer"}],
                            "description": "(exactly one of the alternatives)"}
    assert props["both"]["required"] == ["b", "a"] or props["both"]["required"] == ["a", "b"]
    assert props["both"]["properties"]["b"] == {"type": "string"}
    assert props["both"]["properties"]["a"] == {"type": ["string", "null"]}


def test_a_top_level_any_of_is_folded_into_one_object():
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
              "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}
    function = declared(schema)
    assert function["strict"] is True and "anyOf" not in function["parameters"]
    assert function["parameters"]["description"] == (
        "Give at least one of these sets of properties: (a); (b).")


def test_recursion_by_path_moves_into_defs():
    """zod-to-json-schema points a recursive schema at its first use (#/properties/root)."""
    schema = {"type": "object", "required": ["root"], "properties": {"root": {
        "type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/properties/root"}}}}}}
    params = declared(schema)["parameters"]
    assert params["properties"]["root"]["properties"]["children"]["anyOf"][0]["items"] == {
        "$ref": "#/$defs/ref1"}
    assert params["$defs"]["ref1"]["required"] == ["name", "children"]


def test_a_tool_the_api_would_still_reject_is_left_out():
    fit = openai.fit_tool(tool("t", {"type": "object", "properties": {
        "x": {"type": "array", "items": {"type": "array"}}}}))
    assert fit.status == "rewritten"  # items added, strict off
    unfit = openai.fit_tool(Tool("x" * 65, "d", {"type": "object"}, ("/bin/true",), "test"))
    assert unfit.declaration is None and unfit.reason == "the name must be 1-64 of a-z A-Z 0-9 _ -"


# -- Dropping the nulls strict mode asked for --------------------------------


def prepare(parameters, arguments):
    return openai.prepare_arguments(tool("t", parameters), arguments)


def test_nulls_are_dropped_for_a_top_level_one_of_folded_into_one_object():
    schema = {"oneOf": [
        {"type": "object", "properties": {"script": {"type": "string"}}, "required": ["script"]},
        {"type": "object", "properties": {"image": {"type": "string"}}, "required": ["image"]}]}
    assert prepare(schema, {"script": "a.sh", "image": None}) == {"script": "a.sh"}


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


def test_a_draft_07_tuple_is_sent_in_draft_2020_12():
    schema = {"type": "object", "properties": {"at": {
        "type": "array", "items": [{"type": "number"}, {"type": "number"}], "minItems": 2}}}
    fit = openai.fit_tool(tool("t", schema))
    assert fit.declaration["function"]["parameters"]["properties"]["at"] == {
        "type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "minItems": 2,
        "items": {}}
    assert "/properties/at: items list sent as prefixItems (draft 2020-12)" in fit.changes
