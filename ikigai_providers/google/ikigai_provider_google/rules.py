"""What the Gemini API accepts in a ``functionDeclaration``, each rule with its link.

:func:`problems` checks a finished declaration; the serializer leaves out a tool it
reports anything for. ``parameters`` is Gemini's ``Schema`` object, a select subset of
OpenAPI 3.0 (https://ai.google.dev/api/caching#Schema); ``parametersJsonSchema`` is JSON
Schema, of which Gemini reads the keywords in :data:`JSON_FIELDS`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ikigai_core.schema_tools import draft_07_problems, walk

# https://ai.google.dev/api/caching#FunctionDeclaration
# "name: Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain
# underscores, colons, dots, and dashes, with a maximum length of 64."
NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_:.-]{0,63}")
# https://ai.google.dev/api/caching#Schema - the fields of Schema; any other is answered
# with 'Invalid JSON payload received. Unknown name "..."'.
FIELDS = frozenset({
    "type", "format", "title", "description", "nullable", "enum", "properties", "required",
    "items", "anyOf", "minItems", "maxItems", "minLength", "maxLength", "pattern",
    "minimum", "maximum", "minProperties", "maxProperties", "default", "example",
    "propertyOrdering",
})
# https://ai.google.dev/api/caching#Type - STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT
# (NULL is ``nullable``); one type per schema.
TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object"})
# https://ai.google.dev/api/caching#Schema - "format: ... Supported formats: for NUMBER
# type: float, double; for INTEGER type: int32, int64; for STRING type: enum, date-time".
FORMATS = {"string": frozenset({"enum", "date-time"}), "number": frozenset({"float", "double"}),
           "integer": frozenset({"int32", "int64"})}


# https://ai.google.dev/api/caching#FunctionDeclaration - "parametersJsonSchema: ...
# Describes the parameters to the function in JSON Schema format. The schema must describe an
# object where the properties are the parameters to the function. ... This field is mutually
# exclusive with parameters." The keywords it reads are those of responseJsonSchema
# (https://ai.google.dev/api/generate-content#generationconfig): "only the following
# properties are supported: $id, $defs, $ref, $anchor, type, format, title, description, enum
# (for strings and numbers), items, prefixItems, minItems, maxItems, minimum, maximum, anyOf,
# oneOf (interpreted the same as anyOf), properties, additionalProperties, required. The
# non-standard propertyOrdering property may also be set. ... If $ref is set on a sub-schema,
# no other properties, except for than those starting as a $, may be set." Others are not
# read: a constraint sent in one would be lost, so the serializer moves it into the text.
JSON_FIELDS = frozenset({
    "$id", "$defs", "$ref", "$anchor", "$schema", "type", "format", "title", "description",
    "enum", "items", "prefixItems", "minItems", "maxItems", "minimum", "maximum", "anyOf",
    "oneOf", "properties", "additionalProperties", "required", "propertyOrdering",
})


def problems(declaration: Mapping[str, Any]) -> list[str]:
    """What the API would reject in ``declaration``, one line each."""
    found = []
    if not NAME.fullmatch(str(declaration.get("name", ""))):
        found.append("the name must start with a letter or _ and be 1-64 of "
                     "a-z A-Z 0-9 _ : . -")
    parameters = declaration.get("parameters")
    if "parametersJsonSchema" in declaration:
        if parameters is not None:
            return [*found, "parameters and parametersJsonSchema cannot both be given"]
        return found + _json_schema_problems(declaration["parametersJsonSchema"])
    if parameters is None:
        return found
    # https://ai.google.dev/api/caching#FunctionDeclaration - "parameters: ... Reflects the
    # Open API 3.03 Parameter Object": an object whose properties are the parameters.
    if not isinstance(parameters, Mapping) or str(parameters.get("type", "")).lower() != "object":
        return [*found, "the parameters must be a schema of type object"]
    for path, node, _ in walk(parameters):
        found += [f"{path}: {problem}" for problem in _node_problems(node)]
    return found


def _node_problems(node: Any) -> list[str]:
    if not isinstance(node, Mapping):
        return ["a schema must be an object"]
    found = []
    unknown = sorted(set(node) - FIELDS)
    if unknown:
        found.append(f"not a Schema field: {', '.join(unknown)}")
    kind = str(node.get("type", "")).lower()
    # https://ai.google.dev/api/caching#Schema - "type: Required. Data type." (an anyOf
    # lists its types in its branches instead)
    if kind not in TYPES and "anyOf" not in node:
        found.append("needs one type")
    # https://ai.google.dev/api/caching#Schema - "items: Schema of the elements of Type.ARRAY"
    if kind == "array" and not isinstance(node.get("items"), Mapping):
        found.append("an array needs items")
    # https://ai.google.dev/api/caching#Schema - "properties: Properties of Type.OBJECT";
    # an OBJECT without them is answered "properties: should be non-empty for OBJECT type".
    if kind == "object" and not node.get("properties"):
        found.append("an object needs properties")
    # https://ai.google.dev/api/caching#Schema - "enum: Possible values of the element of
    # Type.STRING with enum format"
    if "enum" in node and (kind != "string"
                           or not all(isinstance(v, str) for v in node["enum"])):
        found.append("enum is only for strings")
    if "format" in node and node["format"] not in FORMATS.get(kind, ()):
        found.append(f"format {node['format']!r} is not supported for {kind or 'no type'}")
    missing = set(node.get("required") or ()) - set(node.get("properties") or {})
    if missing:
        found.append(f"required names no property: {', '.join(sorted(missing))}")
    return found


def _json_schema_problems(schema: Any) -> list[str]:
    """What Gemini would reject, or not read, in a ``parametersJsonSchema``."""
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        return ["parametersJsonSchema must be a schema of type object"]
    found = draft_07_problems(schema)
    for path, node, _ in walk(schema):
        if not isinstance(node, Mapping):
            continue  # true and false are schemas too
        unknown = sorted(set(node) - JSON_FIELDS)
        if unknown:
            found.append(f"{path}: not read by Gemini: {', '.join(unknown)}")
        if not all(isinstance(v, (str, int, float)) and not isinstance(v, bool)
                   for v in node.get("enum") or ()):
            found.append(f"{path}: enum holds strings and numbers only")
        if "$ref" in node and any(not key.startswith("$") for key in node):
            found.append(f"{path}: $ref cannot have keywords beside it")
    return found
