"""draft_2020_12: draft-07 (and draft-04) forms in their 2020-12 form, references followed."""

from __future__ import annotations

from ikigai_core.schema_tools import DRAFT_2020_12, draft_07_problems, draft_2020_12


def test_references_into_moved_places_follow_them():
    schema = {"type": "object", "properties": {
        "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
        "second": {"$ref": "#/properties/pair/items/1"},
        "self": {"$ref": "#"}, "far": {"$ref": "other.json#/definitions/x"},
        "dep": {"$ref": "#/dependencies/a"}},
        "dependencies": {"a": {"properties": {"b": {"type": "string"}}}},
        "definitions": {"x": {"type": "string"}}, "$defs": {"x": {"type": "number"}}}
    out, _ = draft_2020_12(schema)
    props = out["properties"]
    assert props["second"] == {"$ref": "#/properties/pair/prefixItems/1"}
    assert props["self"] == {"$ref": "#"} and props["far"] == {"$ref": "other.json#/definitions/x"}
    assert props["dep"] == {"$ref": "#/dependentSchemas/a"}
    assert out["$defs"] == {"x": {"type": "number"}}, "a name in both: $defs wins"
    assert "definitions" in schema and isinstance(schema["properties"]["pair"]["items"], list)


def test_a_schema_with_nothing_to_rewrite_and_a_boolean_are_unchanged():
    for dialect in (DRAFT_2020_12, "http://json-schema.org/draft-07/schema#"):
        schema = {"$schema": dialect, "type": "object", "properties": {"a": True}}
        assert draft_2020_12(schema) == (schema, [])
        assert draft_07_problems(schema) == []
    assert draft_2020_12(True) == (True, [])


def test_the_problems_name_each_draft_07_form():
    assert draft_07_problems({"$schema": "http://json-schema.org/draft-07/schema#",
                              "definitions": {}, "properties": {
                                  "n": {"exclusiveMinimum": True, "minimum": 1},
                                  "m": {"exclusiveMinimum": 1}}}) == [
        "/: definitions is not draft 2020-12",
        "/properties/n: exclusiveMinimum is not draft 2020-12"]


def test_stray_additional_items_and_boolean_bounds():
    out, changes = draft_2020_12({"type": "object", "properties": {
        "list": {"type": "array", "items": {"type": "string"}, "additionalItems": False},
        "n": {"type": "number", "minimum": 0, "exclusiveMinimum": True,
              "maximum": 9, "exclusiveMaximum": False}}})
    assert out["properties"] == {"list": {"type": "array", "items": {"type": "string"}},
                                 "n": {"type": "number", "exclusiveMinimum": 0, "maximum": 9}}
    assert changes == [
        "/properties/list: additionalItems left out (it applies to an items list only) "
        "(draft 2020-12)",
        "/properties/n: exclusiveMinimum true/false sent as a number; exclusiveMaximum "
        "true/false sent as a number (draft 2020-12)"]
