"""What the OpenAI API accepts in a function tool, as documented: each rule with its link.

:func:`problems` checks a finished ``{"type": "function", "function": ...}`` declaration;
the serializer leaves out a tool it reports anything for. The strict-mode rules are the
Structured Outputs "supported schemas" subset, which function calling with ``strict: true``
uses (https://platform.openai.com/docs/guides/function-calling#strict-mode).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ikigai_core.schema_tools import draft_07_problems, walk

GUIDE = "https://platform.openai.com/docs/guides/structured-outputs"

# https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools
# "The name of the function to be called. Must be a-z, A-Z, 0-9, or contain underscores and
# dashes, with a maximum length of 64."
NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")

# https://platform.openai.com/docs/guides/structured-outputs#supported-schemas
# Supported types and properties: type, anyOf, enum, const, $ref/$defs (recursion too),
# description/title, and by type: string pattern/format; number multipleOf, maximum,
# exclusiveMaximum, minimum, exclusiveMinimum; array minItems, maxItems.
STRICT_KEYWORDS = frozenset({
    "type", "description", "title", "properties", "required", "additionalProperties",
    "items", "enum", "const", "anyOf", "$ref", "$defs", "definitions",
    "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "minItems", "maxItems",
})
# https://platform.openai.com/docs/guides/structured-outputs#supported-properties
# String formats: date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid.
STRICT_FORMATS = frozenset({
    "date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid",
})
# https://platform.openai.com/docs/guides/structured-outputs#objects-have-limitations-on-nesting-depth-and-size
# "A schema may have up to 5000 object properties total, with up to 10 levels of nesting."
MAX_DEPTH = 10
MAX_PROPERTIES = 5000
TOP_LEVEL_FORBIDDEN = ("oneOf", "anyOf", "allOf", "enum", "not")
TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})


def problems(declaration: Mapping[str, Any]) -> list[str]:
    """What the API would reject in ``declaration`` (a function tool), one line each."""
    function = declaration.get("function") or {}
    found = []
    if not NAME.fullmatch(str(function.get("name", ""))):
        found.append("the name must be 1-64 of a-z A-Z 0-9 _ -")
    parameters = function.get("parameters")
    # https://platform.openai.com/docs/guides/function-calling#defining-functions
    # "parameters: JSON schema defining the function's input arguments" - the API answers
    # "schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at
    # the top level" otherwise.
    if not isinstance(parameters, Mapping) or parameters.get("type") != "object":
        return [*found, "the parameters must be a schema of type object"]
    top = [key for key in TOP_LEVEL_FORBIDDEN if key in parameters]
    if top:
        found.append(f"the parameters cannot have {', '.join(top)} at the top level")
    if function.get("strict"):
        found += _strict_problems(parameters)
    else:
        found += _loose_problems(parameters)
    # https://github.com/vercel/ai/issues/2271 - the API validates the parameters as JSON
    # Schema draft 2020-12: a draft-07 tuple is answered "Invalid schema for function 'f':
    # [{'type': 'number'}, {'type': 'number'}] is not of type 'object', 'boolean'".
    return found + draft_07_problems(parameters)


def _strict_problems(root: Mapping[str, Any]) -> list[str]:
    found = []
    properties = 0
    for path, node, depth in walk(root):
        if not isinstance(node, Mapping):
            found.append(f"{path}: a schema must be an object")
            continue
        # https://platform.openai.com/docs/guides/structured-outputs#supported-schemas
        unknown = sorted(set(node) - STRICT_KEYWORDS)
        if unknown:
            found.append(f"{path}: not supported in strict mode: {', '.join(unknown)}")
        # https://platform.openai.com/docs/guides/structured-outputs#definitions-are-supported
        # (a $ref stands alone: the API answers "$ref cannot have keywords")
        if "$ref" in node:
            if set(node) != {"$ref"}:
                found.append(f"{path}: $ref cannot have keywords beside it")
            continue
        kinds = node.get("type")
        kinds = [kinds] if isinstance(kinds, str) else kinds
        # https://platform.openai.com/docs/guides/structured-outputs#supported-types
        if "anyOf" not in node and not (isinstance(kinds, list) and set(kinds) <= TYPES
                                        and kinds):
            found.append(f"{path}: needs a type")
        # https://platform.openai.com/docs/guides/structured-outputs#supported-properties
        if "format" in node and node["format"] not in STRICT_FORMATS:
            found.append(f"{path}: format {node['format']!r} is not supported")
        if kinds and "object" in kinds or "properties" in node:
            names = list(node.get("properties") or {})
            properties += len(names)
            # https://platform.openai.com/docs/guides/structured-outputs#additionalproperties-false-must-always-be-set-in-objects
            if node.get("additionalProperties") is not False:
                found.append(f"{path}: an object needs additionalProperties: false")
            # https://platform.openai.com/docs/guides/structured-outputs#all-fields-must-be-required
            if sorted(node.get("required") or ()) != sorted(names):
                found.append(f"{path}: every property must be in required")
        if kinds and "array" in kinds and not isinstance(node.get("items"), Mapping):
            found.append(f"{path}: an array needs items")
        if depth > MAX_DEPTH:
            found.append(f"{path}: nested deeper than {MAX_DEPTH} levels")
    if properties > MAX_PROPERTIES:
        found.append(f"/: more than {MAX_PROPERTIES} properties")
    return found


def _loose_problems(root: Mapping[str, Any]) -> list[str]:
    """Without strict mode any JSON Schema goes, but an array must say what it holds.

    https://platform.openai.com/docs/guides/function-calling#defining-functions (the API
    answers "array schema missing items" for ``{"type": "array"}``)
    """
    return [f"{path}: an array needs items" for path, node, _ in walk(root)
            if isinstance(node, Mapping) and _has_type(node, "array") and "items" not in node]


def _has_type(node: Mapping[str, Any], kind: str) -> bool:
    kinds = node.get("type")
    return kinds == kind or (isinstance(kinds, list) and kind in kinds)
