"""JSON Schema walking helpers the provider plugins build their schema transformations on."""

from __future__ import annotations

from typing import Any, Callable, Mapping

SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
"""Keywords whose value maps names to subschemas."""
SUBSCHEMA_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")
"""Keywords whose value is a list of subschemas."""
SUBSCHEMAS = (
    "items", "additionalItems", "additionalProperties", "unevaluatedItems",
    "unevaluatedProperties", "not", "if", "then", "else", "contains", "propertyNames",
)
"""Keywords whose value is one subschema (``items`` may also be a draft-4 list)."""

Schema = Any
"""A JSON Schema: a mapping, or ``True``/``False``."""


def map_subschemas(schema: Mapping[str, Any], fn: Callable[[Schema], Schema]) -> dict[str, Any]:
    """A shallow copy of ``schema`` with ``fn`` applied to each of its direct subschemas."""
    out = dict(schema)
    for key in SUBSCHEMA_MAPS:
        if isinstance(out.get(key), Mapping):
            out[key] = {name: fn(sub) for name, sub in out[key].items()}
    for key in (*SUBSCHEMA_LISTS, "items"):
        if isinstance(out.get(key), list):
            out[key] = [fn(sub) for sub in out[key]]
    for key in SUBSCHEMAS:
        if isinstance(out.get(key), (Mapping, bool)):
            out[key] = fn(out[key])
    return out


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
