"""What the Anthropic Messages API accepts in a tool, each rule with its link.

:func:`problems` checks a finished ``{name, description, input_schema}`` tool; the
serializer leaves out a tool it reports anything for. Two rules are enforced by the API
but not written in its documentation; their links are the API's own error messages as
users met them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ikigai_core.schema_tools import draft_07_problems

# https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use#specifying-client-tools
# "name: The name of the tool. Must match the regex ^[a-zA-Z0-9_-]{1,64}$."
NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
# https://github.com/anthropics/claude-code/issues/79418 - the API answers
# "tools.N.custom.input_schema.properties: Property keys should match pattern
# '^[a-zA-Z0-9_.-]{1,64}$'" (checked on the top-level properties).
PROPERTY_KEY = re.compile(r"[a-zA-Z0-9_.-]{1,64}")
# https://github.com/anthropics/claude-code/issues/40075 - the API answers
# "tools.N.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the
# top level".
TOP_LEVEL_COMBINATORS = ("oneOf", "allOf", "anyOf")
# https://json-schema.org/draft/2020-12 - the API answers "tools.N.custom.input_schema: JSON
# schema is invalid. It must match JSON Schema draft 2020-12
# (https://json-schema.org/draft/2020-12)" for draft-07's tuple (an items list), as zod's
# output, and for draft-07's other keywords and $schema (issue 22).


def problems(tool: Mapping[str, Any]) -> list[str]:
    """What the API would reject in ``tool``, one line each."""
    found = []
    if not NAME.fullmatch(str(tool.get("name", ""))):
        found.append("the name must be 1-64 of a-z A-Z 0-9 _ -")
    schema = tool.get("input_schema")
    # https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use#specifying-client-tools
    # "input_schema: A JSON Schema object defining the expected parameters for the tool."
    # (the API answers "input_schema.type: Field required" without "type": "object")
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        return [*found, "input_schema must be a schema of type object"]
    combinators = [key for key in TOP_LEVEL_COMBINATORS if key in schema]
    if combinators:
        found.append(f"input_schema cannot have {', '.join(combinators)} at the top level")
    bad = [key for key in schema.get("properties") or {} if not PROPERTY_KEY.fullmatch(key)]
    if bad:
        found.append(f"property names must be 1-64 of a-z A-Z 0-9 _ . -: {', '.join(bad)}")
    return found + draft_07_problems(schema)
