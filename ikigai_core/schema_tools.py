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


DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
"""The dialect the providers' APIs validate a tool's schema in (Anthropic's ``input_schema``,
OpenAI's ``parameters``, Gemini's ``parametersJsonSchema``)."""
_DRAFT_07_ONLY = ("items", "additionalItems", "definitions", "dependencies",
                  "exclusiveMinimum", "exclusiveMaximum")
"""What :func:`draft_07_problems` looks for (``items`` as a list, the bounds as booleans)."""
_NAMING = frozenset({*SUBSCHEMA_MAPS, *SUBSCHEMA_LISTS, "dependencies"})
"""Keywords whose next JSON-pointer token is a name or an index, not a keyword."""


def draft_2020_12(schema: Schema) -> tuple[Schema, list[str]]:
    """``schema`` with draft-07's keywords in their draft 2020-12 form at every depth, and
    what changed: an array-form ``items`` becomes ``prefixItems`` (``additionalItems``
    becomes ``items``), ``definitions`` ``$defs`` (references rewritten), ``dependencies``
    ``dependentRequired`` (a list) or ``dependentSchemas`` (a schema). A draft-04 boolean
    ``exclusiveMinimum``/``exclusiveMaximum`` takes its bound's number. The meaning is the
    same; a ``$schema`` naming another dialect then names 2020-12 (a schema with nothing to
    rewrite means the same in both, and keeps its own)."""
    changes: list[str] = []

    def convert(node: Schema, path: str) -> Schema:
        if not isinstance(node, Mapping):
            return node
        out, done = _keywords_2020_12(node)
        if done:
            changes.append(f"{path or '/'}: {'; '.join(done)} (draft 2020-12)")
        return map_subschemas_at(out, path, convert)

    converted = convert(schema, "")
    if changes:
        _rewrite_refs(converted)
        if converted.get("$schema", DRAFT_2020_12) != DRAFT_2020_12:
            changes.append(f"/: $schema {converted['$schema']} sent as {DRAFT_2020_12}")
            converted["$schema"] = DRAFT_2020_12
    return converted, changes


def draft_07_problems(schema: Schema) -> list[str]:
    """Where ``schema`` is not draft 2020-12 in the ways :func:`draft_2020_12` rewrites,
    one line each (for the providers' ``rules.py``)."""
    return [f"{path}: {key} is not draft 2020-12" for path, node, _ in walk(schema)
            if isinstance(node, Mapping) for key in _DRAFT_07_ONLY
            if key in node and (key != "items" or isinstance(node[key], list))
            and (not key.startswith("exclusive") or isinstance(node[key], bool))]


def _keywords_2020_12(node: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """One node's draft-07 keywords in 2020-12 form (not its subschemas'), and what changed."""
    out, done = dict(node), []
    extra = out.pop("additionalItems", None)
    if isinstance(out.get("items"), list):
        out["prefixItems"] = out.pop("items")
        if extra is not None:
            out["items"] = extra
        done.append("items list sent as prefixItems"
                    + (", additionalItems as items" if extra is not None else ""))
    elif extra is not None:
        done.append("additionalItems left out (it applies to an items list only)")
    if isinstance(out.get("definitions"), Mapping):
        out["$defs"] = {**out.pop("definitions"), **out.get("$defs", {})}
        done.append("definitions sent as $defs")
    dependencies = out.pop("dependencies", None)
    if isinstance(dependencies, Mapping):
        for name, value in dependencies.items():
            key = "dependentRequired" if isinstance(value, list) else "dependentSchemas"
            out[key] = {**out.get(key, {}), name: value}
        done.append("dependencies sent as dependentRequired/dependentSchemas")
    for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        if isinstance(out.get(exclusive), bool):
            if out.pop(exclusive) and bound in out:
                out[exclusive] = out.pop(bound)
            done.append(f"{exclusive} true/false sent as a number")
    return out, done


def _rewrite_refs(schema: dict[str, Any]) -> None:
    """Point every local ``$ref`` in ``schema`` where :func:`draft_2020_12` moved its target."""
    for _, node, _ in walk(schema):
        if isinstance(node, dict) and isinstance(node.get("$ref"), str):
            node["$ref"] = _ref_2020_12(node["$ref"])


def _ref_2020_12(ref: str) -> str:
    """``#/definitions/x`` -> ``#/$defs/x``, ``.../items/0`` -> ``.../prefixItems/0``,
    ``#/dependencies/x`` -> ``#/dependentSchemas/x``, at keyword positions only."""
    if not ref.startswith("#/"):
        return ref
    tokens = ref.split("/")
    renamed = {"definitions": "$defs", "dependencies": "dependentSchemas"}
    at_keyword = True
    for i in range(1, len(tokens)):
        token, following = tokens[i], tokens[i + 1] if i + 1 < len(tokens) else ""
        if not at_keyword:
            at_keyword = True
            continue
        if token == "items" and following.isdigit():
            tokens[i] = "prefixItems"
        tokens[i] = renamed.get(tokens[i], tokens[i])
        at_keyword = token not in _NAMING and tokens[i] != "prefixItems"
    return "/".join(tokens)
