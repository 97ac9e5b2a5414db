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
_GLOB_CHARS = re.compile(r"[*?\[]")
_MISSING = object()


@dataclass(frozen=True)
class Condition:
    """``pointer`` (RFC 6901, into the arguments) matches ``regex`` (searched) or ``equals``."""

    pointer: str
    regex: str | None = None
    equals: Any = None

    def matches(self, arguments: Any) -> bool:
        """Whether the value at ``pointer`` in ``arguments`` satisfies this condition."""
        value = resolve(arguments, self.pointer)
        if value is _MISSING:
            return False
        if self.regex is not None:
            return isinstance(value, str) and re.search(self.regex, value) is not None
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
        """Whether a call of tool ``name`` with ``arguments`` is covered."""
        return fnmatchcase(name, self.tool) and all(c.matches(arguments) for c in self.when)

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


def parse_condition(text: str) -> Condition:
    """``POINTER~REGEX`` or ``POINTER=VALUE`` (VALUE is JSON when it parses, else a string);
    the pointer ends at the first ``~`` or ``=``."""
    match = re.fullmatch(r"(/[^~=]*)([~=])(.*)", text, re.S)
    if match is None:
        raise UsageError(f"condition {text!r} is not POINTER~REGEX or POINTER=VALUE "
                         "(e.g. '/command~^git status'); the pointer starts with /")
    pointer, operator, rest = match.groups()
    if operator == "~":
        return Condition(pointer, regex=_checked_regex(rest, text))
    try:
        value = json.loads(rest)
    except ValueError:
        value = rest
    return Condition(pointer, equals=value)


def _checked_regex(regex: str, where: str) -> str:
    try:
        re.compile(regex)
    except re.error as exc:
        raise UsageError(f"{where}: invalid regular expression ({exc})") from None
    return regex


def parse_rule(data: Any, origin: str, where: str) -> Rule:
    """One rule from its JSON form; what is wrong with it is one error naming ``where``."""
    if not isinstance(data, dict) or not isinstance(data.get("tool"), str) or not data["tool"]:
        raise ConfigError(f"{where}: a rule must be an object with a 'tool' name or glob")
    if data.get("decision") not in DECISIONS:
        raise ConfigError(f"{where}: rule for '{data['tool']}' needs a 'decision' of "
                          f"{', '.join(DECISIONS)}")
    conditions = []
    for item in data.get("when", []):
        if not isinstance(item, dict) or not isinstance(item.get("pointer"), str) or (
                ("regex" in item) == ("equals" in item)):
            raise ConfigError(f"{where}: rule for '{data['tool']}': each condition needs a "
                              "'pointer' and either 'regex' or 'equals'")
        if "regex" in item:
            regex = item["regex"]
            if not isinstance(regex, str):
                raise ConfigError(f"{where}: rule for '{data['tool']}': 'regex' must be a string")
            try:
                re.compile(regex)
            except re.error as exc:
                raise ConfigError(f"{where}: rule for '{data['tool']}': invalid regular "
                                  f"expression ({exc})") from None
            conditions.append(Condition(item["pointer"], regex=regex))
        else:
            conditions.append(Condition(item["pointer"], equals=item["equals"]))
    number = data.get("id")
    return Rule(data["tool"], data["decision"], tuple(conditions),
                number if isinstance(number, int) else None, origin)


def read_rules(path: Path, origin: str) -> list[Rule]:
    """The rules in ``path`` (none when it does not exist); a corrupt file is one error."""
    data = read_json(path, {"rules": []})
    if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
        raise ConfigError(f"{path} is corrupt (expected {{\"rules\": [...]}}); fix or delete it")
    return [parse_rule(item, origin, str(path)) for item in data["rules"]]


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
    fd = os.open(home / "approvals.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
