"""Arguments that surely pass their schema, told without importing jsonschema.

Importing jsonschema is heavy (it brings referencing, rpds, attrs; figures in the start-up
ledger of docs/decisions.md), so ``ikigai tool run`` avoids it where it can. Most schemas
use a handful of keywords and most arguments are valid, so :func:`surely_valid` answers for
that case alone: it knows ``type``, ``properties``, ``required``, ``additionalProperties``,
``items`` (one schema), ``enum``, ``const`` and the annotations, and says ``False`` for
anything else it meets, which sends the arguments to jsonschema. It never says ``True``
where jsonschema would find an error, so validation is as strict as before; jsonschema still
writes every error message."""

from __future__ import annotations

from typing import Any

_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment",
                          "deprecated", "readOnly", "writeOnly"})
_KNOWN = _ANNOTATIONS | {"type", "properties", "required", "additionalProperties", "items",
                         "enum", "const"}
_TYPES: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),  # 1.0: ask jsonschema
}


def surely_valid(schema: Any, instance: Any) -> bool:
    """True only when ``instance`` certainly satisfies ``schema`` (draft 2020-12 or an
    unstated dialect); False means "ask jsonschema", not "invalid"."""
    if schema is True:
        return True
    if not isinstance(schema, dict) or "$schema" in schema or not schema.keys() <= _KNOWN:
        return False
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not all(isinstance(k, str) and k in _TYPES for k in kinds):
            return False
        if not any(_TYPES[k](instance) for k in kinds):
            return False
    if "enum" in schema and not _among(instance, schema["enum"]):
        return False
    if "const" in schema and not _among(instance, [schema["const"]]):
        return False
    if isinstance(instance, dict):
        return _object_valid(schema, instance)
    if isinstance(instance, list) and "items" in schema:
        return all(surely_valid(schema["items"], item) for item in instance)
    return True


def _object_valid(schema: dict[str, Any], instance: dict[str, Any]) -> bool:
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(properties, dict) or not isinstance(required, list):
        return False
    if not all(isinstance(name, str) and name in instance for name in required):
        return False
    for name, value in instance.items():
        rule = properties.get(name, extra)
        if not surely_valid(rule, value):
            return False
    return True


def _among(instance: Any, values: Any) -> bool:
    """Whether ``instance`` is one of ``values`` by plain equality of same-typed JSON values
    (so ``1`` is not ``True``); anything subtler is left to jsonschema."""
    if not isinstance(values, list):
        return False
    return any(type(value) is type(instance) and value == instance for value in values
               if isinstance(value, (str, int, float, bool)) or value is None)
