"""JSON Schema walking helpers used by the provider transformations."""

from __future__ import annotations

from ikigai_core.schema_tools import inline_refs, map_subschemas, resolve_ref


def mark(schema):
    return {"seen": schema} if isinstance(schema, dict) else ("bool", schema)


def test_map_subschemas_reaches_every_kind_of_child_once():
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "$defs": {"d": {"type": "integer"}},
        "anyOf": [{"type": "null"}],
        "items": [{"type": "string"}],
        "additionalProperties": False,
        "not": {"const": 1},
        "required": ["a"],
        "enum": [{"not": "a schema"}],
    }
    out = map_subschemas(schema, mark)
    assert out["properties"] == {"a": {"seen": {"type": "string"}}}
    assert out["$defs"] == {"d": {"seen": {"type": "integer"}}}
    assert out["anyOf"] == [{"seen": {"type": "null"}}]
    assert out["items"] == [{"seen": {"type": "string"}}]
    assert out["additionalProperties"] == ("bool", False)
    assert out["not"] == {"seen": {"const": 1}}
    assert out["required"] == ["a"] and out["enum"] == [{"not": "a schema"}]
    assert schema["properties"] == {"a": {"type": "string"}}, "the input is not changed"


def test_resolve_ref():
    root = {"$defs": {"a/b": {"type": "string"}, "t~x": {"type": "integer"}}, "definitions": {"n": 1}}
    assert resolve_ref(root, "#/$defs/a~1b") == {"type": "string"}
    assert resolve_ref(root, "#/$defs/t~0x") == {"type": "integer"}
    assert resolve_ref(root, "#") is root
    assert resolve_ref(root, "#/$defs/missing") is None
    assert resolve_ref(root, "#/definitions/n/deeper") is None
    assert resolve_ref(root, "https://example.com/schema") is None


def test_inline_refs_replaces_references_and_drops_definitions():
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "point": {"$ref": "#/$defs/point", "description": "where"},
            "points": {"type": "array", "items": {"$ref": "#/definitions/point"}},
        },
        "$defs": {"point": {"type": "object", "description": "a point",
                            "properties": {"x": {"type": "number"}}}},
        "definitions": {"point": {"type": "object", "properties": {"y": {"type": "number"}}}},
    }
    out = inline_refs(schema)
    assert out == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "point": {"type": "object", "description": "where", "properties": {"x": {"type": "number"}}},
            "points": {"type": "array", "items": {"type": "object", "properties": {"y": {"type": "number"}}}},
        },
    }


def test_inline_refs_cuts_recursion_and_unresolvable_references():
    tree = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/node"}, "ext": {"$ref": "other.json#/x"}},
        "$defs": {"node": {"type": "object", "description": "a node",
                           "properties": {"children": {"type": "array",
                                                       "items": {"$ref": "#/$defs/node"}}}}},
    }
    out = inline_refs(tree)
    node = out["properties"]["root"]
    assert node["description"] == "a node"
    assert node["properties"]["children"]["items"] == {"description": "a node"}
    assert out["properties"]["ext"] == {}
    assert inline_refs(True) is True
