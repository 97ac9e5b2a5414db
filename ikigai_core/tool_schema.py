"""Is a tool's schema usable? (spec decision 3)"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema.protocols import Validator


def validator_class(parameters: Mapping[str, Any]) -> type[Validator]:
    """The validator for ``parameters``' ``$schema`` dialect; the latest draft when unknown."""
    from jsonschema.validators import Draft202012Validator, validator_for  # lazy: cold scans only

    chosen: type[Validator] = validator_for(parameters, default=Draft202012Validator)
    return chosen


def validate_schema(schema: Mapping[str, Any]) -> str | None:
    """Why ``schema`` is not a usable tool schema (spec decision 3), or None.

    ``parameters`` must pass its dialect's meta-schema, regular expressions included.
    """
    for field in ("name", "description"):
        if not isinstance(schema.get(field), str):
            return f"schema has no string '{field}'"
    parameters = schema.get("parameters")
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        return "schema 'parameters' must be a JSON Schema object with \"type\": \"object\""
    if not isinstance(parameters.get("$schema", ""), str):
        return "schema 'parameters' has a '$schema' that is not a string (a meta-schema URI)"
    validator = validator_class(parameters)
    meta = validator(validator.META_SCHEMA, format_checker=validator.FORMAT_CHECKER)
    for error in meta.iter_errors(parameters):
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return f"schema 'parameters' is not valid JSON Schema at {where}: {error.message}"
    return None
