"""OpenAI strict mode: make a tool's parameters strict, and undo it in the arguments.

Strict mode (spec decision 15) wants, at every depth, objects with
``additionalProperties: false`` and every property in ``required``; a property that
was optional becomes nullable, and the model sends ``null`` for "not given".
:func:`drop_nulls` removes those nulls before the tool runs.

Keywords strict mode does not take are rewritten so meaning is kept: a ``$ref`` with
keywords beside it is inlined, ``oneOf`` becomes ``anyOf``, ``allOf`` is merged, a
missing ``type`` is inferred, and a constraint strict mode lacks (``default``,
``minLength``, a ``format`` outside its list, ...) moves into the description. A schema
that still cannot be strict (a map, an object or value of any shape, a tuple) is sent
with ``strict: false``; see ``rules.py`` for the documented rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ikigai_core.schema_tools import (
    ANNOTATIONS,
    describe,
    describe_dropped,
    json_type,
    map_subschemas_at,
    merge_into,
    resolve_ref,
    resolved,
)
from ikigai_provider_openai.rules import STRICT_FORMATS, STRICT_KEYWORDS

SIMPLE_TYPES = frozenset({"string", "number", "integer", "boolean"})
"""Types made nullable with a type list; objects and arrays get ``anyOf`` with null."""
DEFINITIONS = ("$defs", "definitions")
STRICT_FORM = "strict form: every property required (optional ones nullable), no other keys"


class NotStrict(Exception):
    """The schema holds something strict mode cannot express (the message says what)."""


@dataclass
class StrictSchema:
    """A tool's parameters made strict, and what was rewritten beyond the strict form."""

    schema: dict[str, Any]
    changes: list[str] = field(default_factory=list)


def strict_parameters(parameters: Mapping[str, Any]) -> StrictSchema:
    """The strict form of a tool's ``parameters``; :class:`NotStrict` when it has none."""
    if parameters.get("type") != "object":
        raise NotStrict("the parameters are not one object")
    return _Converter(parameters).run()


class _Converter:
    """One conversion: the root (for ``$ref``), refs moved into ``$defs``, the changes."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.changes: list[str] = []
        self.hoisted: dict[str, str] = {}  # ref -> its name in $defs
        self.hoisted_schemas: dict[str, Any] = {}

    def run(self) -> StrictSchema:
        out = self.node(self.root, "", ())
        for key in DEFINITIONS:
            if isinstance(self.root.get(key), Mapping):
                out[key] = {name: self.node(sub, f"/{key}/{name}", ())
                            for name, sub in self.root[key].items()}
        done: set[str] = set()
        while todo := [name for name in self.hoisted_schemas if name not in done]:
            for name in todo:  # converting a hoisted schema may hoist more
                done.add(name)
                target = self.hoisted_schemas[name]
                out.setdefault("$defs", {})[name] = self.node(target, f"/$defs/{name}", ())
        return StrictSchema(out, self.changes)

    def note(self, path: str, text: str) -> None:
        self.changes.append(f"{path or '/'}: {text}")

    def node(self, node: Any, path: str, active: tuple[str, ...]) -> dict[str, Any]:
        """``node`` made strict (its children too); ``active`` guards inlining loops."""
        if not isinstance(node, Mapping) or not node:
            raise NotStrict(f"{path or 'the root'} accepts any value")
        out = {k: v for k, v in node.items() if k not in ANNOTATIONS and k not in DEFINITIONS}
        if node.get("discriminator"):
            self.note(path, "discriminator left out (the branches still say which is which)")
        ref = out.get("$ref")
        if isinstance(ref, str):
            return self.reference(out, ref, path, active)
        if isinstance(out.get("items"), list) or "prefixItems" in out:
            raise NotStrict(f"{path or 'the root'} is a tuple (items by position)")
        extra = out.get("additionalProperties")
        if out.get("patternProperties") or (isinstance(extra, Mapping) and extra):
            raise NotStrict(f"{path or 'the root'} is a map (keys it does not name)")
        self.unify(out, path)
        self.drop_unsupported(out, path)
        self.infer_type(out, path)
        if isinstance(out.get("properties"), Mapping):
            out["properties"] = {name: self.node(sub, f"{path}/properties/{name}", active)
                                 for name, sub in out["properties"].items()}
        if isinstance(out.get("items"), (Mapping, bool)):
            out["items"] = self.node(out["items"], f"{path}/items", active)
        if isinstance(out.get("anyOf"), list):
            out["anyOf"] = [self.node(sub, f"{path}/anyOf/{i}", active)
                            for i, sub in enumerate(out["anyOf"])]
        if "array" in _kinds(out) and "items" not in out:
            raise NotStrict(f"{path or 'the root'} is an array of any values")
        return self.objects(out, path) if "object" in _kinds(out) else out

    def reference(self, out: dict[str, Any], ref: str, path: str,
                  active: tuple[str, ...]) -> dict[str, Any]:
        """A pure ``$ref`` to a definition stays; keywords beside it inline its target once."""
        target = resolve_ref(self.root, ref)
        if not isinstance(target, Mapping):
            raise NotStrict(f"{path or 'the root'} refers to {ref}, which is not in the schema")
        siblings = {k: v for k, v in out.items() if k != "$ref"}
        if siblings and ref not in active:
            self.note(path, f"$ref with keywords beside it inlined ({ref})")
            return self.node({**target, **siblings}, path, (*active, ref))
        if siblings:
            self.note(path, f"keywords beside a recursive $ref left out: {', '.join(siblings)}")
        return {"$ref": self.definition(ref, target, path)}

    def definition(self, ref: str, target: Mapping[str, Any], path: str) -> str:
        """``ref`` as strict mode takes it: ``#``, or into ``$defs``/``definitions``."""
        parts = ref.split("/")
        if ref == "#" or (len(parts) == 3 and parts[1] in DEFINITIONS):
            return ref
        if ref not in self.hoisted:
            taken = set(self.root.get("$defs") or ()) | set(self.hoisted_schemas)
            name = next(f"ref{n}" for n in range(1, len(taken) + 2) if f"ref{n}" not in taken)
            self.hoisted[ref] = name
            self.hoisted_schemas[name] = target
            self.note(path, f"{ref} moved into $defs/{name}")
        return f"#/$defs/{self.hoisted[ref]}"

    def unify(self, out: dict[str, Any], path: str) -> None:
        """``oneOf`` -> ``anyOf``; ``allOf`` merged into the node."""
        if "oneOf" in out:
            branches = out.pop("oneOf")
            out["anyOf"] = [*out.get("anyOf", []), *branches]
            describe(out, "(exactly one of the alternatives)")
            self.note(path, "oneOf sent as anyOf")
        if isinstance(out.get("allOf"), list):
            for branch in out.pop("allOf"):
                merge_into(out, resolved(self.root, branch))
            self.note(path, "allOf merged into one schema")

    def drop_unsupported(self, out: dict[str, Any], path: str) -> None:
        """Keywords strict mode lacks go into the description (``format`` outside its list too)."""
        dropped = {k: out.pop(k) for k in list(out) if k not in STRICT_KEYWORDS}
        if "format" in out and out["format"] not in STRICT_FORMATS:
            dropped["format"] = out.pop("format")
        if dropped.get("default", 0) is None:
            del dropped["default"]  # "null when not given" says nothing strict mode does not
        if dropped:
            describe_dropped(out, dropped)
            self.note(path, f"{', '.join(dropped)} moved into the description")

    def infer_type(self, out: dict[str, Any], path: str) -> None:
        """Strict mode wants a ``type`` on every node that is not an ``anyOf``."""
        if "type" in out or "anyOf" in out:
            return
        values = out.get("enum", [out["const"]] if "const" in out else None)
        if isinstance(values, list) and values:
            kinds = list(dict.fromkeys(json_type(value) for value in values))
            if {"integer", "number"} <= set(kinds):
                kinds.remove("integer")
            out["type"] = kinds[0] if len(kinds) == 1 else kinds
        elif "properties" in out:
            out["type"] = "object"
        elif "items" in out:
            out["type"] = "array"
        else:
            raise NotStrict(f"{path or 'the root'} has no type")
        self.note(path, f"type {out['type']} added (from its values)")

    def objects(self, out: dict[str, Any], path: str) -> dict[str, Any]:
        """Every property required (optional ones nullable); no other keys."""
        properties = out.get("properties")
        extra = out.get("additionalProperties", True)
        if properties is None and path:  # explicit "properties": {} is an empty object
            raise NotStrict(f"{path} is an object of any keys")
        if extra is not False and "additionalProperties" in out:
            self.note(path, "additionalProperties: false (strict mode sends only the named keys)")
        required = set(out.get("required") or ())
        out["properties"] = {name: sub if name in required else _nullable(sub)
                             for name, sub in (properties or {}).items()}
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
        return out


def loose_parameters(parameters: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``parameters`` for ``strict: false``: unchanged but for what the API rejects even
    then (an array without ``items``), and those changes."""
    changes: list[str] = []

    def fix(node: Any, path: str) -> Any:
        if not isinstance(node, Mapping):
            return node
        out = map_subschemas_at(node, path, fix)
        if "array" in _kinds(out) and "items" not in out:
            out["items"] = {}
            changes.append(f"{path or '/'}: items: {{}} added (an array must say what it holds)")
        return out

    return fix(parameters, ""), changes


def _kinds(node: Mapping[str, Any]) -> list[str]:
    """The types ``node`` names (``object`` when it has ``properties``)."""
    kind = node.get("type")
    kinds = [kind] if isinstance(kind, str) else list(kind) if isinstance(kind, list) else []
    return [*kinds, "object"] if "properties" in node and "object" not in kinds else kinds


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` accepting ``null`` too."""
    kind = node.get("type")
    kinds = [kind] if isinstance(kind, str) else kind
    if (isinstance(kinds, list) and SIMPLE_TYPES.issuperset(set(kinds) - {"null"})
            and "const" not in node):
        out = {**node, "type": kinds if "null" in kinds else [*kinds, "null"]}
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out
    if "anyOf" in node and set(node) <= {"anyOf", "description", "title"}:
        branches = node["anyOf"]
        if {"type": "null"} in branches:
            return node
        return {**node, "anyOf": [*branches, {"type": "null"}]}
    return {"anyOf": [node, {"type": "null"}]}


def drop_nulls(parameters: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` without the nulls the model sent for properties the tool made optional.

    A null stays where the tool's own schema accepts it (or says nothing about the
    property). Walks nested objects, arrays, ``$ref`` and ``anyOf`` like the schema does.
    """
    dropped: dict[str, Any] = _drop(parameters, dict(arguments), parameters)
    return dropped


def _drop(schema: Any, value: Any, root: Mapping[str, Any]) -> Any:
    schema = _deref(schema, root)
    if not isinstance(schema, Mapping):
        return value
    if isinstance(value, dict):
        for branch in schema.get("anyOf") or ():
            if isinstance(_deref(branch, root), Mapping) and "properties" in _deref(branch, root):
                return _drop(branch, value, root)
        properties = schema.get("properties") or {}
        required = set(schema.get("required") or ())
        return {
            key: _drop(properties.get(key), item, root)
            for key, item in value.items()
            if item is not None or key in required or _accepts_null(properties.get(key), root)
        }
    if isinstance(value, list):
        return [_drop(schema.get("items"), item, root) for item in value]
    return value


def _deref(schema: Any, root: Mapping[str, Any]) -> Any:
    for _ in range(32):
        if not (isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str)):
            break
        schema = resolve_ref(root, schema["$ref"])
    return schema


def _accepts_null(schema: Any, root: Mapping[str, Any]) -> bool:
    schema = _deref(schema, root)
    if not isinstance(schema, Mapping):
        return True  # unknown property, or `true`: whatever the model sent is allowed
    kind = schema.get("type")
    if kind is not None:
        return kind == "null" or (isinstance(kind, list) and "null" in kind)
    if "enum" in schema:
        return None in schema["enum"]
    if "const" in schema:
        return schema["const"] is None
    branches = schema.get("anyOf") or schema.get("oneOf")
    if branches:
        return any(_accepts_null(branch, root) for branch in branches)
    return True
