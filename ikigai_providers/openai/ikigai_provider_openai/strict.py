"""OpenAI strict mode: make a tool's parameters strict, and undo it in the arguments.

Strict mode (spec decision 15) wants, at every depth, objects with
``additionalProperties: false`` and every property in ``required``; a property that
was optional becomes nullable, and the model sends ``null`` for "not given".
:func:`drop_nulls` removes those nulls before the tool runs. A schema using a keyword
strict mode does not accept is sent unchanged with ``strict: false``.
"""

from __future__ import annotations

from typing import Any, Mapping

from ikigai_core.schema_tools import map_subschemas, resolve_ref

STRICT_KEYWORDS = frozenset({
    "type", "description", "title", "properties", "required", "additionalProperties",
    "items", "enum", "const", "anyOf", "$ref", "$defs", "definitions",
    "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "minItems", "maxItems",
})
"""Keywords OpenAI accepts in strict mode (its Structured Outputs "supported schemas")."""
DROPPED_KEYWORDS = frozenset({"$schema", "$id", "$comment"})
"""Annotations that carry no constraint and are left out of the strict form."""
CONSTRAINING = frozenset({"type", "anyOf", "$ref", "enum", "const"})
"""A strict schema names its type with at least one of these (``{}`` is not strict)."""
SIMPLE_TYPES = frozenset({"string", "number", "integer", "boolean"})
"""Types made nullable with a type list; objects and arrays get ``anyOf`` with null."""


class _NotStrict(Exception):
    """The schema uses something strict mode cannot express."""


def strict_parameters(parameters: Mapping[str, Any]) -> dict[str, Any] | None:
    """The strict form of a tool's ``parameters``, or ``None`` when it has none."""
    if parameters.get("type") != "object":
        return None
    try:
        return _strict(parameters)
    except _NotStrict:
        return None


def _strict(node: Any) -> dict[str, Any]:
    if (
        not isinstance(node, Mapping)
        or not STRICT_KEYWORDS.issuperset(set(node) - DROPPED_KEYWORDS)
        or not CONSTRAINING & set(node)
        or isinstance(node.get("items"), list)  # tuple validation
    ):
        raise _NotStrict
    kept = {k: v for k, v in node.items() if k not in DROPPED_KEYWORDS}
    out = map_subschemas(kept, _strict_child)
    if not _is_object(out):
        return out
    properties = out.get("properties")
    if not isinstance(properties, Mapping) or out.get("additionalProperties", False) is not False:
        raise _NotStrict
    required = set(node.get("required") or ())
    out["properties"] = {
        name: sub if name in required else _nullable(sub) for name, sub in properties.items()
    }
    out["required"] = list(properties)
    out["additionalProperties"] = False
    return out


def _strict_child(node: Any) -> Any:
    # additionalProperties: false is the one boolean subschema strict mode wants.
    return node if node is False else _strict(node)


def _is_object(node: Mapping[str, Any]) -> bool:
    kind = node.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in node


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` accepting ``null`` too."""
    kind = node.get("type")
    kinds = [kind] if isinstance(kind, str) else kind
    if isinstance(kinds, list) and SIMPLE_TYPES.issuperset(set(kinds) - {"null"}):
        out = {**node, "type": kinds if "null" in kinds else [*kinds, "null"]}
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out
    if "anyOf" in node and set(node) <= {"anyOf", "description", "title"}:
        branches = node["anyOf"]
        if {"type": "null"} in branches:
            return node
        return {**node, "anyOf": [*branches, {"type": "null"}]}
    return {"anyOf": [node, {"type": "null"}]}


def drop_nulls(parameters: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` without the nulls the model sent for properties the tool made optional.

    A null stays where the tool's own schema accepts it (or says nothing about the
    property). Walks nested objects, arrays, ``$ref`` and ``anyOf`` like the schema does.
    """
    dropped: dict[str, Any] = _drop(parameters, dict(arguments), parameters)
    return dropped


def _drop(schema: Any, value: Any, root: Mapping[str, Any]) -> Any:
    schema = _deref(schema, root)
    if not isinstance(schema, Mapping):
        return value
    if isinstance(value, dict):
        for branch in schema.get("anyOf") or ():
            if isinstance(_deref(branch, root), Mapping) and "properties" in _deref(branch, root):
                return _drop(branch, value, root)
        properties = schema.get("properties") or {}
        required = set(schema.get("required") or ())
        return {
            key: _drop(properties.get(key), item, root)
            for key, item in value.items()
            if item is not None or key in required or _accepts_null(properties.get(key), root)
        }
    if isinstance(value, list):
        return [_drop(schema.get("items"), item, root) for item in value]
    return value


def _deref(schema: Any, root: Mapping[str, Any]) -> Any:
    for _ in range(32):
        if not (isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str)):
            break
        schema = resolve_ref(root, schema["$ref"])
    return schema


def _accepts_null(schema: Any, root: Mapping[str, Any]) -> bool:
    schema = _deref(schema, root)
    if not isinstance(schema, Mapping):
        return True  # unknown property, or `true`: whatever the model sent is allowed
    kind = schema.get("type")
    if kind is not None:
        return kind == "null" or (isinstance(kind, list) and "null" in kind)
    if "enum" in schema:
        return None in schema["enum"]
    if "const" in schema:
        return schema["const"] is None
    branches = schema.get("anyOf") or schema.get("oneOf")
    if branches:
        return any(_accepts_null(branch, root) for branch in branches)
    return True
