"""Is a tool's schema usable? (spec decision 3)"""

from __future__ import annotations

from typing import Any, Mapping


def validate_schema(schema: Mapping[str, Any]) -> str | None:
    """Why ``schema`` is not a usable tool schema (spec decision 3), or None."""
    for field in ("name", "description"):
        if not isinstance(schema.get(field), str):
            return f"schema has no string '{field}'"
    parameters = schema.get("parameters")
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        return "schema 'parameters' must be a JSON Schema object with \"type\": \"object\""
    from jsonschema.validators import validator_for  # lazy: only a cold scan needs it

    validator = validator_for(parameters)
    for error in validator(validator.META_SCHEMA).iter_errors(parameters):
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return f"schema 'parameters' is not valid JSON Schema at {where}: {error.message}"
    return None
