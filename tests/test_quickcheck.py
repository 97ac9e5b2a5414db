"""quickcheck.surely_valid never vouches for arguments jsonschema would refuse."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from ikigai_core.quickcheck import surely_valid

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5),
                    st.floats(allow_nan=False, allow_infinity=False, width=16), st.text(max_size=3))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abc"), inner, max_size=3)),
    max_leaves=8)
TYPES = st.sampled_from(["object", "array", "string", "integer", "number", "boolean", "null"])


def schemas(depth: int = 2):
    """Schemas of the keywords surely_valid knows, and a few it does not."""
    leaf = st.fixed_dictionaries({}, optional={
        "type": st.one_of(TYPES, st.lists(TYPES, min_size=1, max_size=2)),
        "enum": st.lists(SCALARS, min_size=1, max_size=3),
        "const": SCALARS,
        "description": st.text(max_size=3),
        "minLength": st.integers(0, 2),
    })
    if depth == 0:
        return st.one_of(leaf, st.booleans())
    inner = schemas(depth - 1)
    return st.one_of(leaf, st.booleans(), st.fixed_dictionaries({}, optional={
        "type": st.sampled_from(["object", "array"]),
        "properties": st.dictionaries(st.sampled_from("abc"), inner, max_size=3),
        "required": st.lists(st.sampled_from("abc"), max_size=3, unique=True),
        "additionalProperties": inner,
        "items": inner,
    }))


@settings(max_examples=600, deadline=None)
@given(schemas(), VALUES)
def test_surely_valid_agrees_with_jsonschema(schema, instance):
    if surely_valid(schema, instance):
        assert Draft202012Validator(schema).is_valid(instance), (schema, instance)


@pytest.mark.parametrize("schema, instance", [
    ({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
     {"command": "true"}),
    ({"type": "object", "properties": {"n": {"type": ["integer", "null"]}}}, {"n": None}),
    ({"type": "object", "additionalProperties": {"type": "string"}}, {"x": "y"}),
    ({"type": "array", "items": {"enum": ["a", "b"]}}, ["a", "b"]),
])
def test_common_valid_arguments_need_no_jsonschema(schema, instance):
    assert surely_valid(schema, instance)


@pytest.mark.parametrize("schema, instance", [
    ({"type": "object", "required": ["command"]}, {}),
    ({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": 1.0}),  # jsonschema's
    ({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": True}),
    ({"type": "object", "additionalProperties": False}, {"x": 1}),
    ({"type": "object", "properties": {"s": {"type": "string", "minLength": 1}}}, {"s": "x"}),
    ({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}, {}),
    ({"enum": [1]}, 1.0),
])
def test_anything_else_goes_to_jsonschema(schema, instance):
    assert not surely_valid(schema, instance)
