"""Permission rules for tool calls: what they are, how they match, where they live.

A rule names a tool (a glob), optional conditions on the call's JSON arguments (a JSON
pointer and a regular expression, or an exact value) and a decision: ``allow``, ``ask`` or
``deny``. Of the rules matching a call, a ``deny`` wins; otherwise the most specific rule
wins (:meth:`Rule.specificity`), and on a tie ``ask`` beats ``allow``.

The user's rules are ``$IKIGAI_HOME/permissions.json`` (user-only, locked on change); a
trusted project's ``.ikigai/permissions.json`` adds ``deny`` and ``ask`` rules only.
Every decision is appended to ``$IKIGAI_HOME/approvals.jsonl`` (user-only).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from ikigai_core.errors import ConfigError, UsageError
from ikigai_core.statefiles import ensure_private_dir, locked, read_json, write_private_json

DECISIONS = ("allow", "ask", "deny")
MATCH_TIMEOUT = 0.25
"""Seconds one condition's regular expression may search one argument (``regex``'s
timeout; issue 21): past it the rule fails closed (:meth:`Rule.matches`)."""
_GLOB_CHARS = re.compile(r"[*?\[]")
_POINTER = re.compile(r"(/([^~]|~[01])*)+")
_CONDITION_KEYS = ({"pointer", "regex"}, {"pointer", "equals"})
_RULE_KEYS = {"id", "tool", "decision", "when"}
_MISSING = object()


@dataclass(frozen=True)
class Condition:
    """``pointer`` (RFC 6901, into the arguments) matches ``regex`` (searched) or ``equals``."""

    pointer: str
    regex: str | None = None
    equals: Any = None

    def matches(self, arguments: Any, *, on_timeout: bool = False) -> bool:
        """Whether the value at ``pointer`` in ``arguments`` satisfies this condition; a
        regular expression still searching after :data:`MATCH_TIMEOUT` answers ``on_timeout``."""
        value = resolve(arguments, self.pointer)
        if value is _MISSING:
            return False
        if self.regex is not None:
            return isinstance(value, str) and _found(self.regex, value, on_timeout)
        return _canonical(value) == _canonical(self.equals)

    def to_json(self) -> dict[str, Any]:
        """The condition as ``permissions.json`` holds it."""
        if self.regex is not None:
            return {"pointer": self.pointer, "regex": self.regex}
        return {"pointer": self.pointer, "equals": self.equals}

    def __str__(self) -> str:
        if self.regex is not None:
            return f"{self.pointer}~{self.regex}"
        return f"{self.pointer}={json.dumps(self.equals, ensure_ascii=False)}"


@dataclass(frozen=True)
class Rule:
    """One rule: which calls it covers and what it decides.

    :param tool: a tool name or a glob (``mcp_*``).
    :param decision: ``allow``, ``ask`` or ``deny``.
    :param when: conditions on the arguments; all must hold.
    :param id: its number in ``permissions.json`` (``None`` for rules from elsewhere).
    :param origin: where it comes from: ``user``, ``project``, ``--allow``.
    """

    tool: str
    decision: str
    when: tuple[Condition, ...] = ()
    id: int | None = None
    origin: str = field(default="user", compare=False)

    def matches(self, name: str, arguments: Any) -> bool:
        """Whether a call of tool ``name`` with ``arguments`` is covered. A regular
        expression that times out fails closed: it matches for ``deny`` and ``ask``, not
        for ``allow``."""
        strict = self.decision != "allow"
        return fnmatchcase(name, self.tool) and all(c.matches(arguments, on_timeout=strict)
                                                    for c in self.when)

    def specificity(self) -> tuple[int, int, int]:
        """Larger is more specific: an exact tool name beats a glob, then more conditions
        beat fewer, then a longer literal part of the glob beats a shorter one."""
        literal = _GLOB_CHARS.sub("", self.tool)
        return (0 if _GLOB_CHARS.search(self.tool) else 1, len(self.when), len(literal))

    def to_json(self) -> dict[str, Any]:
        """The rule as ``permissions.json`` holds it."""
        data: dict[str, Any] = {"id": self.id, "tool": self.tool, "decision": self.decision}
        if self.when:
            data["when"] = [c.to_json() for c in self.when]
        return data

    def __str__(self) -> str:
        number = f"rule {self.id}: " if self.id is not None else f"{self.origin} rule: "
        conditions = f" when {' and '.join(map(str, self.when))}" if self.when else ""
        return f"{number}{self.decision} {self.tool}{conditions}"


def resolve(document: Any, pointer: str) -> Any:
    """The value ``pointer`` (RFC 6901) points at in ``document``, or a private marker."""
    if pointer == "":
        return document
    value = document
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return _MISSING
    return value


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _found(pattern: str, text: str, on_timeout: bool) -> bool:
    import regex  # lazy: only a rule with a regular expression needs it

    try:
        return regex.search(pattern, text, timeout=MATCH_TIMEOUT) is not None
    except TimeoutError:
        return on_timeout


def allow_rule(spec: str, origin: str) -> Rule:
    """``TOOL[:CONDITION]``, as ``--allow`` (``origin``) takes it: the rule allowing those
    calls; a :class:`UsageError` naming ``origin`` when it is malformed."""
    tool, _, condition = spec.partition(":")
    if not tool:
        raise UsageError(f"{origin} {spec!r}: name a tool, e.g. {origin} bash")
    return Rule(tool, "allow", (parse_condition(condition),) if condition else (), origin=origin)


def parse_condition(text: str) -> Condition:
    """``POINTER~REGEX`` or ``POINTER=VALUE`` (VALUE is JSON when it parses, else a string);
    the pointer ends at the first ``~`` or ``=``. Checked by :func:`condition_of`, as
    ``permissions.json`` is."""
    match = re.fullmatch(r"([^~=]*)([~=])(.*)", text, re.S)
    if match is None:
        raise UsageError(f"condition {text!r} is not POINTER~REGEX or POINTER=VALUE "
                         "(e.g. '/command~^git status'); the pointer starts with /")
    pointer, operator, rest = match.groups()
    if operator == "~":
        item = {"pointer": pointer, "regex": rest}
    else:
        try:
            value = json.loads(rest)
        except ValueError:
            value = rest
        item = {"pointer": pointer, "equals": value}
    try:
        return condition_of(item)
    except ValueError as exc:
        raise UsageError(f"condition {text!r}: {exc}") from None


def condition_of(item: Any) -> Condition:
    """The condition ``item``, its ``permissions.json`` form, stands for; a ``ValueError``
    says what is wrong with it (the command line's conditions are checked here too)."""
    if not isinstance(item, dict) or set(item) not in _CONDITION_KEYS:
        raise ValueError('a condition is {"pointer": ..., "regex": ...} or '
                         '{"pointer": ..., "equals": ...}')
    pointer = item["pointer"]
    if not isinstance(pointer, str) or _POINTER.fullmatch(pointer) is None:
        raise ValueError(f"pointer {json.dumps(pointer)} is not a JSON pointer starting "
                         "with / (e.g. \"/command\")")
    if "equals" in item:
        return Condition(pointer, equals=item["equals"])
    pattern = item["regex"]
    if not isinstance(pattern, str):
        raise ValueError("'regex' must be a string")
    import regex

    try:
        regex.compile(pattern)
    except regex.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r} ({exc})") from None
    return Condition(pointer, regex=pattern)


def parse_rule(data: Any, origin: str) -> Rule:
    """One rule from its JSON form; a ``ValueError`` says what is wrong with it. Keys it
    does not know are wrong too: a misspelt ``when`` would widen the rule to every call."""
    if not isinstance(data, dict):
        raise ValueError("a rule must be an object with a 'tool' and a 'decision'")
    unknown = sorted(set(data) - _RULE_KEYS)
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} (a rule has {', '.join(sorted(_RULE_KEYS))})")
    tool, decision, number = data.get("tool"), data.get("decision"), data.get("id")
    if not isinstance(tool, str) or not tool:
        raise ValueError("'tool' must be a tool name or a glob")
    if decision not in DECISIONS:
        raise ValueError(f"'decision' must be one of {', '.join(DECISIONS)}")
    if number is not None and (type(number) is not int or number < 1):
        raise ValueError("'id' must be a whole number from 1")
    when = data.get("when", [])
    if not isinstance(when, list):
        raise ValueError("'when' must be a list of conditions")
    conditions = []
    for index, item in enumerate(when):
        try:
            conditions.append(condition_of(item))
        except ValueError as exc:
            raise ValueError(f"when[{index}]: {exc}") from None
    return Rule(tool, decision, tuple(conditions), number, origin)


def read_rules(path: Path, origin: str) -> list[Rule]:
    """The rules in ``path`` (none when it does not exist). Any fault refuses the whole
    file, in one ``ConfigError`` naming it and the rule's index: half a file is never used."""
    data = read_json(path, {"rules": []})
    if not isinstance(data, dict) or set(data) != {"rules"} or not isinstance(data["rules"],
                                                                               list):
        raise ConfigError(f"{path} is corrupt (expected {{\"rules\": [...]}}); fix or delete it")
    rules, numbers = [], set()
    for index, item in enumerate(data["rules"]):
        try:
            rule = parse_rule(item, origin)
            if rule.id is not None and rule.id in numbers:
                raise ValueError(f"'id' {rule.id} is used twice")
        except ValueError as exc:
            raise ConfigError(f"{path}: rules[{index}]: {exc}; fix or remove that rule") from None
        rules.append(rule)
        numbers.add(rule.id)
    return rules


def deciding_rule(rules: Sequence[Rule], name: str, arguments: Any) -> Rule | None:
    """The rule that decides a call: any matching ``deny``, else the most specific match
    (``ask`` over ``allow`` on a tie), else ``None``."""
    matching = [rule for rule in rules if rule.matches(name, arguments)]
    for rule in matching:
        if rule.decision == "deny":
            return rule
    if not matching:
        return None
    return max(matching, key=lambda rule: (rule.specificity(), rule.decision == "ask"))


class RuleStore:
    """The user's rules in ``$IKIGAI_HOME/permissions.json``."""

    def __init__(self, home: Path) -> None:
        self.path = home / "permissions.json"

    def rules(self) -> list[Rule]:
        """Every rule, in file order."""
        return read_rules(self.path, "user")

    def add(self, tool: str, decision: str, when: Sequence[Condition] = ()) -> Rule:
        """Store a new rule (numbered one past the highest yet) and return it."""
        with locked(self.path):
            rules = self.rules()
            number = max((rule.id or 0 for rule in rules), default=0) + 1
            rule = Rule(tool, decision, tuple(when), number)
            self._write([*rules, rule])
        return rule

    def remove(self, number: int) -> Rule:
        """Delete rule ``number`` and return it; an unknown number is a usage error."""
        with locked(self.path):
            rules = self.rules()
            found = [rule for rule in rules if rule.id == number]
            if not found:
                raise UsageError(f"no rule {number}; `ikigai permissions list` shows them")
            self._write([rule for rule in rules if rule.id != number])
        return found[0]

    def _write(self, rules: Sequence[Rule]) -> None:
        write_private_json(self.path, {"rules": [rule.to_json() for rule in rules]})


def record_decision(home: Path, entry: Mapping[str, Any]) -> None:
    """Append one decision, with the time, to ``$IKIGAI_HOME/approvals.jsonl`` (0600).

    Raises ``OSError`` when it cannot be written.
    """
    line = json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **entry},
                      ensure_ascii=False) + "\n"
    ensure_private_dir(home)
    fd = os.open(home / "approvals.jsonl", os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        end = os.fstat(fd).st_size
        if end and os.pread(fd, 1, end - 1) != b"\n":  # a line cut short: ours starts anew
            line = "\n" + line
        os.write(fd, line.encode())
    finally:
        os.close(fd)
