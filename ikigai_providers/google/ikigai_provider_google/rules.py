"""What the Gemini API accepts in a ``functionDeclaration``, each rule with its link.

:func:`problems` checks a finished declaration; the serializer leaves out a tool it
reports anything for. ``parameters`` is Gemini's ``Schema`` object, a select subset of
OpenAPI 3.0 (https://ai.google.dev/api/caching#Schema).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ikigai_core.schema_tools import walk

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


def problems(declaration: Mapping[str, Any]) -> list[str]:
    """What the API would reject in ``declaration``, one line each."""
    found = []
    if not NAME.fullmatch(str(declaration.get("name", ""))):
        found.append("the name must start with a letter or _ and be 1-64 of "
                     "a-z A-Z 0-9 _ : . -")
    parameters = declaration.get("parameters")
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
