"""Tool parameters in the forms Gemini accepts (spec decision 17, issue 22).

Gemini's ``Schema`` object (``generativelanguage`` v1beta, see ``rules.py``) is a select
subset of OpenAPI 3.0: one ``type``, ``nullable``, ``enum`` of strings, a few ``format``
values, ``properties``, ``required``, ``items``, ``anyOf``, bounds, ``title``,
``description``, ``default``, ``example``, ``propertyOrdering``. Everything else is
rewritten into that subset, keeping its meaning where the subset cannot say it:

- ``$ref`` is inlined (a recursive one ends in a value of any type, described),
  ``allOf`` merged, ``oneOf`` sent as ``anyOf``, type lists become ``nullable``,
  ``const`` becomes an ``enum``, enums of other values move into the description;
- a node without a type gets one from what it holds; a value of any type, and an array's
  missing ``items``, become "a string, number or boolean" (Gemini has no "anything");
- a tuple becomes an array of its item types, bounded to its length;
- any other constraint (``exclusiveMinimum``, ``uniqueItems``, ...) moves into the
  description.

An object of any keys (``{"type": "object"}``, a map such as pydantic's ``dict[str, str]``
or zod's ``z.record``) ``Schema`` cannot express (:class:`Unfit`): such a tool's parameters
go as ``parametersJsonSchema`` instead (:func:`json_parameters`), JSON Schema 2020-12 in
the keywords Gemini reads, ``additionalProperties`` among them, so no property is lost.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ikigai_core.schema_tools import (
    ANNOTATIONS,
    describe,
    describe_dropped,
    draft_2020_12,
    inline_refs,
    json_type,
    map_subschemas_at,
    merge_into,
)
from ikigai_core.schema_top import one_object
from ikigai_provider_google.rules import FIELDS, FORMATS, JSON_FIELDS

ANY_VALUE: dict[str, Any] = {"anyOf": [{"type": "string"}, {"type": "number"},
                                       {"type": "boolean"}]}
"""What Gemini can say for "a value of any type"."""
HANDLED = frozenset({"oneOf", "allOf", "const", "examples", "prefixItems",
                     "additionalProperties", "additionalItems", "$ref", "$defs",
                     "definitions"})
"""Keywords the rewrite turns into Schema fields (not described as dropped constraints)."""


class Unfit(Exception):
    """The parameters need something ``Schema`` cannot express (the message says what)."""


def gemini_parameters(parameters: Mapping[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    """A tool's parameters as a ``Schema`` for ``parameters`` (``None`` when it takes none:
    Gemini rejects an object with empty ``properties``), and what was changed.

    :raises Unfit: an object of any keys is in them (send :func:`json_parameters`).
    """
    top, changes = one_object(parameters)
    if not top.get("properties"):
        if top.get("additionalProperties", False) is not False:
            raise Unfit("the arguments are an object of any keys")
        if parameters != {"type": "object", "properties": {}}:
            changes.append("parameters left out: the tool takes no arguments here")
        return None, changes
    if '"$ref"' in _text(top):
        changes.append("$ref inlined (Gemini has no $ref)")
    cleaner = _Cleaner(changes)
    schema = cleaner.node(inline_refs(top), "")
    if cleaner.silent:
        changes.append(f"left out, as they constrain nothing here: "
                       f"{', '.join(sorted(cleaner.silent))}")
    return schema, changes


def json_parameters(parameters: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A tool's parameters as JSON Schema 2020-12 for ``parametersJsonSchema``, in the
    keywords Gemini reads (``rules.JSON_FIELDS``), and what was changed: references
    inlined (Gemini allows nothing beside a ``$ref``), ``oneOf`` and ``allOf`` as for
    ``parameters``, an enum of other values and every other keyword moved into the
    description."""
    drafted, changes = draft_2020_12(parameters)
    top, more = one_object(drafted)
    changes += more
    if '"$ref"' in _text(top):
        changes.append("$ref inlined (Gemini allows nothing beside a $ref)")
    return _json_node(inline_refs(top), "", changes), changes


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


class _Cleaner:
    """One rewrite, collecting what it changed."""

    def __init__(self, changes: list[str]) -> None:
        self.changes = changes
        self.silent: set[str] = set()
        """Keywords left out without a note per node (annotations, ``additionalProperties``)."""

    def note(self, path: str, text: str) -> None:
        self.changes.append(f"{path or '/'}: {text}")

    def node(self, node: Any, path: str) -> dict[str, Any]:
        """``node`` in Gemini's subset.

        :raises Unfit: ``node`` is, or holds, an object of any keys.
        """
        if not isinstance(node, Mapping):
            node = {}
        out = {key: value for key, value in node.items() if key not in ANNOTATIONS}
        if isinstance(node.get("examples"), list) and node["examples"]:
            out.setdefault("example", node["examples"][0])
        self.tuples(out, path)
        if "oneOf" in out:
            out["anyOf"] = [*out.get("anyOf", []), *out.pop("oneOf")]
            describe(out, "(exactly one of the alternatives)")
            self.note(path, "oneOf sent as anyOf")
        self.children(out, path)
        if "allOf" in out:
            self.note(path, "allOf merged into one schema")
        _merge_all_of(out)
        if _types_to_nullable(out) | _null_branches_to_nullable(out):
            self.note(path, "null sent as nullable")
        if _enums_to_strings(out):
            self.note(path, "non-string enum moved into the description")
        self.infer_type(out, path)
        if out.get("format") not in FORMATS.get(out.get("type"), ()):  # type: ignore[arg-type]
            if "format" in out:
                describe_dropped(out, {"format": out.pop("format")})
                self.note(path, "format moved into the description")
        dropped = {k: v for k, v in out.items() if k not in FIELDS and k not in HANDLED}
        extra = out.get("additionalProperties")
        if isinstance(extra, Mapping) and extra and out.get("properties"):
            dropped["additionalProperties"] = extra  # other keys: the model should know
        if dropped:
            describe_dropped(out, dropped)
            self.note(path, f"{', '.join(dropped)} moved into the description")
        if out.get("type") == "object" and not out.get("properties"):
            raise Unfit(f"{path} is an object of any keys, which parameters cannot hold")
        self.silent |= set(node) & (ANNOTATIONS | HANDLED - {"oneOf", "prefixItems"})
        return {key: value for key, value in out.items() if key in FIELDS}

    def tuples(self, out: dict[str, Any], path: str) -> None:
        """``prefixItems`` (or a draft-4 ``items`` list) -> an array of its item types."""
        positions = out.pop("prefixItems", None)
        if isinstance(out.get("items"), list):
            positions = out.pop("items")
        if not isinstance(positions, list) or not positions:
            return
        branches = list({_text(b): b for b in positions}.values())
        out["items"] = branches[0] if len(branches) == 1 else {"anyOf": branches}
        out.setdefault("minItems", len(positions))
        if out.get("items") is not True and out.get("additionalItems", False) is False:
            out.setdefault("maxItems", len(positions))
        describe(out, f"(a tuple of {len(positions)} items, in order)")
        self.note(path, "tuple sent as an array of its item types")

    def children(self, out: dict[str, Any], path: str) -> None:
        """Clean every subschema (``properties``, ``items``, ``anyOf``, ``allOf``)."""
        if isinstance(out.get("properties"), Mapping):
            out["properties"] = {name: self.node(sub, f"{path}/properties/{name}")
                                 for name, sub in out["properties"].items()}
        if isinstance(out.get("items"), (Mapping, bool)):
            out["items"] = self.node(out["items"], f"{path}/items")
        for key in ("anyOf", "allOf"):
            if isinstance(out.get(key), list):
                out[key] = [self.node(sub, f"{path}/{key}/{i}") for i, sub in enumerate(out[key])]

    def infer_type(self, out: dict[str, Any], path: str) -> None:
        """Every Gemini schema has a type (or lists them in ``anyOf``)."""
        if "anyOf" in out:
            return
        if "type" not in out:
            if "properties" in out:
                out["type"] = "object"
            elif "items" in out:
                out["type"] = "array"
            else:
                out.update(ANY_VALUE)
                self.note(path, "any value sent as a string, number or boolean")
                return
        if out["type"] == "array" and "items" not in out:
            out["items"] = dict(ANY_VALUE)
            self.note(path, "array items of any type sent as strings, numbers or booleans")


def _merge_all_of(out: dict[str, Any]) -> None:
    """``allOf`` (often one ``$ref`` with a description next to it) merged into the node."""
    for branch in out.pop("allOf", None) or ():
        merge_into(out, branch)
    if isinstance(out.get("properties"), Mapping) and isinstance(out.get("required"), list):
        out["required"] = [name for name in out["required"] if name in out["properties"]]


def _types_to_nullable(out: dict[str, Any]) -> bool:
    """``"type": ["string", "null"]`` -> ``"type": "string", "nullable": true``; True when
    the node had a type list."""
    kinds = out.get("type")
    if not isinstance(kinds, list):
        return False
    real = [kind for kind in kinds if kind != "null"]
    if len(real) < len(kinds):
        out["nullable"] = True
    if len(real) == 1:
        out["type"] = real[0]
    else:
        del out["type"]
        if real:
            out["anyOf"] = [{"type": kind} for kind in real]
    return True


def _null_branches_to_nullable(out: dict[str, Any]) -> bool:
    """``anyOf: [X, {"type": "null"}]`` -> X with ``nullable: true``; True when changed."""
    branches = out.get("anyOf")
    if not isinstance(branches, list):
        return False
    real = [branch for branch in branches if branch.get("type") != "null"]
    if len(real) == len(branches):
        return False
    out["nullable"] = True
    if len(real) == 1:
        del out["anyOf"]
        for key, value in real[0].items():
            out.setdefault(key, value)
    elif real:
        out["anyOf"] = real
    else:
        del out["anyOf"]
    return True


def _enums_to_strings(out: dict[str, Any]) -> bool:
    """Gemini enums hold strings: ``const`` becomes an enum; other values move to the
    description. True when values moved."""
    if "const" in out:
        out.setdefault("enum", [out.pop("const")])
    values = out.get("enum")
    if not isinstance(values, list):
        return False
    if all(isinstance(value, str) for value in values) and out.get("type", "string") == "string":
        out["type"] = "string"
        return False
    del out["enum"]
    kinds = {json_type(value) for value in values} - {"null"}
    kinds = {"number"} if kinds == {"integer", "number"} else kinds
    if None in values:
        out["nullable"] = True
    if len(kinds) == 1 and "type" not in out and "anyOf" not in out:
        out["type"] = kinds.pop()  # Gemini wants a type: say what the values were
    describe(out, "Allowed values: " + ", ".join(map(_literal, values)) + ".")
    return True


def _literal(value: Any) -> str:
    if value is None:
        return "null"
    return str(value).lower() if isinstance(value, bool) else str(value)


def _json_node(node: Any, path: str, changes: list[str]) -> Any:
    """``node`` and its subschemas in the JSON Schema keywords Gemini reads (a boolean
    schema as it is)."""
    if not isinstance(node, Mapping):
        return node
    out = {key: value for key, value in node.items() if key not in ANNOTATIONS}
    if "oneOf" in out:
        out["anyOf"] = [*out.get("anyOf", []), *out.pop("oneOf")]
        describe(out, "(exactly one of the alternatives)")
        changes.append(f"{path or '/'}: oneOf sent as anyOf")
    if "allOf" in out:
        _merge_all_of(out)
        changes.append(f"{path or '/'}: allOf merged into one schema")
    if "const" in out:
        out.setdefault("enum", [out.pop("const")])
    if not all(isinstance(v, (str, int, float)) and not isinstance(v, bool)
               for v in out.get("enum") or ()):
        describe(out, "Allowed values: " + ", ".join(map(_literal, out.pop("enum"))) + ".")
        changes.append(f"{path or '/'}: enum of other values than strings and numbers "
                       "moved into the description")
    dropped = {key: value for key, value in out.items() if key not in JSON_FIELDS}
    if dropped:
        out = {key: value for key, value in out.items() if key in JSON_FIELDS}
        describe_dropped(out, dropped)
        changes.append(f"{path or '/'}: {', '.join(dropped)} moved into the description")
    return map_subschemas_at(out, path, lambda sub, at: _json_node(sub, at, changes))
