"""JSON Schema walking helpers the provider plugins build their schema transformations on."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
"""Keywords whose value maps names to subschemas."""
SUBSCHEMA_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")
"""Keywords whose value is a list of subschemas."""
SUBSCHEMAS = (
    "items", "additionalItems", "additionalProperties", "unevaluatedItems",
    "unevaluatedProperties", "not", "if", "then", "else", "contains", "propertyNames",
)
"""Keywords whose value is one subschema (``items`` may also be a draft-4 list)."""

ANNOTATIONS = frozenset({
    "$schema", "$id", "$anchor", "$comment", "readOnly", "writeOnly", "deprecated",
    "discriminator", "examples",
})
"""Keywords that constrain nothing (``discriminator`` only names the branch's key): a
provider that rejects them loses no meaning when they are left out."""

Schema = Any
"""A JSON Schema: a mapping, or ``True``/``False``."""


def json_type(value: Any) -> str:
    """The JSON Schema type of a JSON value (``integer`` for whole numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def describe(node: dict[str, Any], text: str) -> None:
    """Append ``text`` to ``node``'s description (the model still reads what a keyword said)."""
    node["description"] = f"{node['description']} {text}" if node.get("description") else text


def describe_dropped(node: dict[str, Any], dropped: Mapping[str, Any]) -> None:
    """Append the keywords in ``dropped`` to ``node``'s description: ``(minLength: 1, ...)``."""
    if dropped:
        parts = ", ".join(f"{key}: {json.dumps(value, ensure_ascii=False)}"
                          for key, value in dropped.items())
        describe(node, f"({parts})")


def map_subschemas(schema: Mapping[str, Any], fn: Callable[[Schema], Schema]) -> dict[str, Any]:
    """A shallow copy of ``schema`` with ``fn`` applied to each of its direct subschemas."""
    return map_subschemas_at(schema, "", lambda sub, path: fn(sub))


def map_subschemas_at(
    schema: Mapping[str, Any], path: str, fn: Callable[[Schema, str], Schema]
) -> dict[str, Any]:
    """:func:`map_subschemas`, ``fn`` also given each subschema's JSON pointer (``schema``
    being at ``path``)."""
    out = dict(schema)
    for key in SUBSCHEMA_MAPS:
        if isinstance(out.get(key), Mapping):
            out[key] = {name: fn(sub, f"{path}/{key}/{name}") for name, sub in out[key].items()}
    for key in (*SUBSCHEMA_LISTS, "items"):
        if isinstance(out.get(key), list):
            out[key] = [fn(sub, f"{path}/{key}/{i}") for i, sub in enumerate(out[key])]
    for key in SUBSCHEMAS:
        if isinstance(out.get(key), (Mapping, bool)):
            out[key] = fn(out[key], f"{path}/{key}")
    return out


def walk(node: Schema, path: str = "", depth: int = 0) -> Iterator[tuple[str, Schema, int]]:
    """``(JSON pointer, subschema, depth)`` for ``node`` and every subschema below it;
    the depth counts the objects (``properties``) above. ``"/"`` is the root."""
    yield path or "/", node, depth
    if not isinstance(node, Mapping):
        return
    deeper = depth + (1 if "properties" in node else 0)
    for key in SUBSCHEMA_MAPS:
        if isinstance(node.get(key), Mapping):
            for name, sub in node[key].items():
                yield from walk(sub, f"{path}/{key}/{name}", deeper)
    for key in (*SUBSCHEMA_LISTS, "items"):
        if isinstance(node.get(key), list):
            for index, sub in enumerate(node[key]):
                yield from walk(sub, f"{path}/{key}/{index}", deeper)
    for key in SUBSCHEMAS:
        value = node.get(key)
        if isinstance(value, Mapping) or (
                isinstance(value, bool) and key != "additionalProperties"):
            yield from walk(value, f"{path}/{key}", deeper)


def resolve_ref(root: Mapping[str, Any], ref: str) -> Schema | None:
    """The subschema a local ``$ref`` (``#/$defs/x``) points to in ``root``, or ``None``."""
    if not ref.startswith("#"):
        return None
    node: Any = root
    for token in ref[1:].lstrip("/").split("/") if ref != "#" else ():
        token = token.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or token not in node:
            return None
        node = node[token]
    return node


def resolved(root: Mapping[str, Any], branch: Schema) -> Mapping[str, Any]:
    """``branch`` with a local ``$ref`` replaced by its target (keywords beside it win);
    ``{}`` for a boolean schema."""
    if not isinstance(branch, Mapping):
        return {}
    target = resolve_ref(root, branch["$ref"]) if isinstance(branch.get("$ref"), str) else None
    if isinstance(target, Mapping):
        return {**target, **{k: v for k, v in branch.items() if k != "$ref"}}
    return branch


def merge_into(out: dict[str, Any], branch: Mapping[str, Any]) -> None:
    """Merge an ``allOf`` ``branch`` into ``out``: properties and required joined, other
    keywords taken where ``out`` has none."""
    for key, value in branch.items():
        if key == "properties" and isinstance(value, Mapping):
            out["properties"] = {**value, **out.get("properties", {})}
        elif key == "required" and isinstance(value, list):
            out["required"] = list(dict.fromkeys([*out.get("required", []), *value]))
        else:
            out.setdefault(key, value)


def inline_refs(schema: Schema) -> Schema:
    """``schema`` with every local ``$ref`` replaced by its target and ``$defs`` dropped.

    Keywords next to a ``$ref`` are kept (they win over the target's). A reference
    back into itself (a recursive schema) becomes ``{}`` (anything) with the target's
    description; an unresolvable reference becomes ``{}`` too.
    """
    if not isinstance(schema, Mapping):
        return schema

    def expand(node: Schema, active: tuple[str, ...]) -> Schema:
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = resolve_ref(schema, ref)
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            if not isinstance(target, Mapping) or ref in active:
                described = target if isinstance(target, Mapping) else {}
                keep = {k: described[k] for k in ("description",) if k in described}
                return expand({**keep, **siblings}, active)
            return expand({**target, **siblings}, (*active, ref))
        out = map_subschemas(node, lambda sub: expand(sub, active))
        out.pop("$defs", None)
        out.pop("definitions", None)
        return out

    return expand(schema, ())
