"""Tool parameters in the JSON Schema subset Gemini accepts (spec decision 17).

Gemini's ``Schema`` object (``generativelanguage`` v1beta) is a select subset of
OpenAPI 3.0: ``type`` (one), ``nullable``, ``enum`` of strings, a few ``format`` values,
``properties``, ``required``, ``items``, ``anyOf``, bounds, ``title``, ``description``,
``default``, ``example``, ``propertyOrdering``. Everything else is rewritten into that
subset (``$ref`` inlined, ``allOf`` merged, type lists to ``nullable``, ``const`` to
``enum``) or dropped
(``additionalProperties``, ``$schema``, ``patternProperties``, ...).
"""

from __future__ import annotations

from typing import Any, Mapping

from ikigai_core.schema_tools import inline_refs, map_subschemas

ALLOWED = frozenset({
    "type", "format", "title", "description", "nullable", "enum", "properties", "required",
    "items", "anyOf", "minItems", "maxItems", "minLength", "maxLength", "pattern",
    "minimum", "maximum", "minProperties", "maxProperties", "default", "example",
    "propertyOrdering",
})
"""The fields of Gemini's ``Schema`` object."""
FORMATS = {"string": {"enum", "date-time"}, "number": {"float", "double"},
           "integer": {"int32", "int64"}}
"""The ``format`` values Gemini accepts, by type; others are dropped."""


def gemini_parameters(parameters: Mapping[str, Any]) -> dict[str, Any] | None:
    """A tool's parameters for a ``functionDeclaration``; ``None`` when it takes none
    (Gemini rejects an object schema with empty ``properties``)."""
    schema = _clean(inline_refs(parameters))
    return schema if schema.get("properties") else None


def _clean(node: Any) -> dict[str, Any]:
    if not isinstance(node, Mapping):
        return {}  # `true` (anything) has no Gemini form but "no constraint"
    out = dict(node)
    if isinstance(out.get("items"), list):
        out["items"] = {"anyOf": out["items"]}
    if "oneOf" in out and "anyOf" not in out:
        out["anyOf"] = out.pop("oneOf")
    if isinstance(out.get("examples"), list) and out["examples"]:
        out.setdefault("example", out["examples"][0])
    out = map_subschemas(out, _clean)
    _merge_all_of(out)
    _types_to_nullable(out)
    _null_branches_to_nullable(out)
    _enums_to_strings(out)
    if isinstance(out.get("properties"), Mapping) and isinstance(out.get("required"), list):
        out["required"] = [name for name in out["required"] if name in out["properties"]]
    if out.get("format") not in FORMATS.get(out.get("type"), ()):  # type: ignore[arg-type]
        out.pop("format", None)
    return {key: value for key, value in out.items() if key in ALLOWED}


def _merge_all_of(out: dict[str, Any]) -> None:
    """``allOf`` (often one ``$ref`` with a description next to it) merged into the node."""
    for branch in out.pop("allOf", None) or ():
        for key, value in branch.items():
            if key == "properties":
                out["properties"] = {**value, **out.get("properties", {})}
            elif key == "required":
                out["required"] = list(dict.fromkeys([*out.get("required", []), *value]))
            else:
                out.setdefault(key, value)


def _types_to_nullable(out: dict[str, Any]) -> None:
    """``"type": ["string", "null"]`` -> ``"type": "string", "nullable": true``."""
    kinds = out.get("type")
    if not isinstance(kinds, list):
        return
    real = [kind for kind in kinds if kind != "null"]
    if len(real) < len(kinds):
        out["nullable"] = True
    if len(real) == 1:
        out["type"] = real[0]
    else:
        del out["type"]
        if real:
            out["anyOf"] = [{"type": kind} for kind in real]


def _null_branches_to_nullable(out: dict[str, Any]) -> None:
    """``anyOf: [X, {"type": "null"}]`` -> X with ``nullable: true``."""
    branches = out.get("anyOf")
    if not isinstance(branches, list):
        return
    real = [branch for branch in branches if branch.get("type") != "null"]
    if len(real) < len(branches):
        out["nullable"] = True
    if len(real) == 1:
        del out["anyOf"]
        for key, value in real[0].items():
            out.setdefault(key, value)
    else:
        out["anyOf"] = real


def _enums_to_strings(out: dict[str, Any]) -> None:
    """Gemini enums hold strings: ``const`` becomes an enum; other values move to the
    description."""
    if "const" in out:
        out.setdefault("enum", [out["const"]])
    values = out.get("enum")
    if not isinstance(values, list):
        return
    if all(isinstance(value, str) for value in values):
        out.setdefault("type", "string")
        return
    del out["enum"]
    kinds = {_json_type(value) for value in values}
    kinds = {"number"} if kinds == {"integer", "number"} else kinds
    if len(kinds) == 1 and None not in kinds and "type" not in out and "anyOf" not in out:
        out["type"] = kinds.pop()  # Gemini wants a type: say what the values were
    allowed = "Allowed values: " + ", ".join(map(_literal, values)) + "."
    out["description"] = f"{out['description']} {allowed}" if out.get("description") else allowed


def _json_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return "number" if isinstance(value, float) else None


def _literal(value: Any) -> str:
    if value is None:
        return "null"
    return str(value).lower() if isinstance(value, bool) else str(value)
