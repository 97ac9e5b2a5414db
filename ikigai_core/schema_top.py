"""A tool's parameters as one plain object at the top, which every provider wants.

OpenAI, Anthropic and Gemini all reject a top level that is not ``"type": "object"`` or
that holds ``anyOf``/``oneOf``/``allOf`` (see each provider's ``rules.py``). So a missing
top-level ``type`` becomes ``object``; a top-level ``allOf`` is merged in; a top-level
``anyOf``/``oneOf`` either only says which properties are needed
(``[{"required": ["a"]}, ...]``) or lists whole alternatives: either way its branches'
properties join the object, required only where every branch requires them, and which
branch to follow goes into the description, so the model still reads it. ``not`` and
``enum`` at the top level move into the description too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ikigai_core.schema_tools import describe, describe_dropped, merge_into, resolved


def one_object(parameters: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``parameters`` as one object schema at the top level, and what was changed."""
    out = dict(parameters)
    changes = []
    dropped: dict[str, Any] = {key: out.pop(key) for key in ("not", "enum") if key in out}
    if dropped:
        describe_dropped(out, dropped)
        changes.append(f"top-level {', '.join(dropped)} moved into the description")
    if "type" not in out:
        out["type"] = "object"
        changes.append("type object added at the top level")
    if isinstance(out.get("allOf"), list):
        for branch in out.pop("allOf"):
            merge_into(out, resolved(parameters, branch))
        changes.append("top-level allOf merged into the schema")
    for key, words in (("anyOf", "at least one"), ("oneOf", "exactly one")):
        branches = out.pop(key, None)
        if isinstance(branches, list) and branches:
            _alternatives(out, [resolved(parameters, b) for b in branches], words)
            changes.append(f"top-level {key} folded into one object (described)")
    return out, changes


def _alternatives(out: dict[str, Any], branches: Sequence[Mapping[str, Any]], words: str) -> None:
    """The alternatives as one object: every property of each, required only where every
    alternative requires it; which alternative the model must follow goes in the description."""
    common = None
    forms = []
    for branch in branches:
        for name, schema in (branch.get("properties") or {}).items():
            out.setdefault("properties", {}).setdefault(name, schema)
        needed = list(branch.get("required") or ())
        common = set(needed) if common is None else common & set(needed)
        names = needed or list(branch.get("properties") or ())
        forms.append(", ".join(names) or "nothing")
    if common:
        out["required"] = list(dict.fromkeys([*out.get("required", []), *sorted(common)]))
    describe(out, f"Give {words} of these sets of properties: "
             + "; ".join(f"({form})" for form in forms) + ".")
