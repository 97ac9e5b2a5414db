"""Agent definitions: the sub-agents a conversation may fork by name (issue 25).

A definition is a ``NAME.md`` file: YAML front matter (``name``, ``description``, optionally
``tools``, ``model``, ``max_turns``, ``budget``), then the agent's system prompt. They come
from ``$IKIGAI_HOME/agents`` (user) and a trusted project's ``.ikigai/agents`` (project, which
wins on a name clash, as for tools and skills). The file is read as a skill file is
(:mod:`ikigai_toolkit.skillfile`, :func:`ikigai_core.skills.parse_front_matter`); every field
is checked, and a definition with anything wrong is skipped with one line, the others load.
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ikigai_core.budget import Budget
from ikigai_core.errors import ConfigError
from ikigai_core.record import Record
from ikigai_core.registry import ByName
from ikigai_core.skills import INDEX_LINE_CHARS, SKILL_NAME_RE, parse_front_matter
from ikigai_core.statefiles import check_private
from ikigai_core.tools import TOOL_NAME_RE, SkippedTool
from ikigai_core.trust import find_project_trust
from ikigai_toolkit.skillfile import SkillFileError, read_skill_file

FIELDS = ("name", "description", "tools", "model", "max_turns", "budget")
"""The front matter's keys; any other is refused (a misspelt ``max_turn`` must not drop a
limit silently)."""
BUDGET_KINDS: Mapping[str, type] = MappingProxyType(
    {"tokens": int, "turns": int, "seconds": float, "cost": float})
"""A definition's ``budget`` keys and their kinds: the fields of :class:`Budget`."""
MAX_DESCRIPTION_CHARS = 1024
MAX_MODEL_CHARS = 200


class AgentDefinition(Record):
    """One usable agent definition.

    :param name: how a fork, ``/fork`` and ``ikigai agents show`` name it.
    :param description: when to use it; shown to the model choosing an agent.
    :param prompt: the body: the agent's system prompt.
    :param path: its file.
    :param source: ``user`` or ``project``.
    :param tools: the only tools it may call (``None``: its parent's).
    :param model: its model (``None``: its parent's).
    :param max_turns: its model turns per prompt (``None``: the ``max_turns`` setting's).
    :param budget: its limits; one left ``None`` takes the fork's, else the
        ``agents_budget_*`` setting's (the parent's budget caps them all).
    """

    name: str
    description: str
    prompt: str
    path: Path
    source: str
    tools: tuple[str, ...] | None = None
    model: str | None = None
    max_turns: int | None = None
    budget: Budget = Budget()

    def index_line(self) -> str:
        """``- name: description`` on one line of at most 160 characters."""
        line = " ".join(f"- {self.name}: {self.description}".split())
        return line if len(line) <= INDEX_LINE_CHARS else line[: INDEX_LINE_CHARS - 1] + "…"

    def to_json(self) -> dict[str, Any]:
        """The definition as ``ikigai agents list|show --json`` print it."""
        return {"name": self.name, "description": self.description, "source": self.source,
                "path": str(self.path), "tools": None if self.tools is None else
                list(self.tools), "model": self.model, "max_turns": self.max_turns,
                "budget": {kind: getattr(self.budget, kind) for kind in BUDGET_KINDS
                           if getattr(self.budget, kind) is not None},
                "prompt": self.prompt}


class SkippedAgent(SkippedTool):
    """A definition that is not usable, and why: ``name``, ``source``, ``reason``, ``path``,
    ``kind`` (``invalid``, ``untrusted`` or ``ignored``, as for tools)."""


class Invalid(Exception):
    """A definition's field is wrong; the message is the one-line reason."""


def read_definition(path: Path, source: str) -> AgentDefinition | SkippedAgent:
    """Read and check one definition file; anything wrong is a :class:`SkippedAgent`."""
    try:
        check_private(path)  # its text steers a model and picks its tools: yours alone
        front, body = read_skill_file(path)
        if front is None:
            raise Invalid("no front matter: start it with ---, description: ..., ---")
        meta = parse_front_matter(front)
        if isinstance(meta, str):
            raise Invalid(meta)
        return _definition(meta or {}, body, path, source)
    except (ConfigError, SkillFileError, Invalid) as exc:
        return SkippedAgent(path.stem, source, str(exc), path)


def _definition(meta: dict[str, Any], body: str, path: Path,
                source: str) -> AgentDefinition:
    for key in meta:
        if key not in FIELDS:
            raise Invalid(f"unknown front matter key {str(key)!r:.40}{_did_you_mean(key, FIELDS)}"
                          f"; known: {', '.join(FIELDS)}")
    name = meta.get("name", path.stem)
    if not isinstance(name, str) or not SKILL_NAME_RE.fullmatch(name):
        raise Invalid(f"'name' must be 1-64 of A-Z a-z 0-9 _ -, got {name!r:.40}")
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise Invalid("no description: add 'description:' saying when to use this agent")
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise Invalid(f"'description' is over {MAX_DESCRIPTION_CHARS} characters")
    if not body.strip():
        raise Invalid("no system prompt: write the agent's instructions after the front matter")
    return AgentDefinition(name=name, description=" ".join(description.split()),
                           prompt=body.strip(), path=path, source=source,
                           tools=_tools(meta.get("tools")), model=_model(meta.get("model")),
                           max_turns=_positive("max_turns", meta.get("max_turns"), int),
                           budget=_budget(meta.get("budget")))


def _tools(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    if not isinstance(value, list) or not all(
            isinstance(t, str) and TOOL_NAME_RE.fullmatch(t) for t in value):
        raise Invalid("'tools' must be a list of tool names (A-Z a-z 0-9 _ -)")
    return tuple(dict.fromkeys(value))


def _model(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_MODEL_CHARS \
            or not value.isprintable() or value != value.strip():
        raise Invalid(f"'model' must be a model name, got {value!r:.40}")
    return value


def _positive(key: str, value: Any, kind: type) -> Any:
    if value is None:
        return None
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not number or not 0 < value < math.inf or (kind is int and value != int(value)):
        what = "a positive whole number" if kind is int else "a positive number"
        raise Invalid(f"'{key}' must be {what}, got {value!r:.40}")
    return kind(value)


def _budget(value: Any) -> Budget:
    if value is None:
        return Budget()
    if not isinstance(value, dict):
        raise Invalid(f"'budget' must be a mapping of {', '.join(BUDGET_KINDS)}")
    budget = {}
    for kind, number in value.items():
        if kind not in BUDGET_KINDS:
            raise Invalid(f"unknown budget kind {str(kind)!r:.40}"
                          f"{_did_you_mean(kind, BUDGET_KINDS)}; known: "
                          f"{', '.join(BUDGET_KINDS)}")
        budget[kind] = _positive(f"budget.{kind}", number, BUDGET_KINDS[kind])
    return Budget(**budget)


def _did_you_mean(word: Any, known: Sequence[str] | Mapping[str, Any]) -> str:
    close = difflib.get_close_matches(str(word), list(known), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


class AgentDirectory:
    """Every ``NAME.md`` definition in one directory (a missing one holds none).

    :param untrusted_reason: when given, the files are listed as ``untrusted`` with this
        reason, and not read.
    """

    def __init__(self, directory: Path, *, name: str,
                 untrusted_reason: str | None = None) -> None:
        self.directory = directory
        self.name = name
        self.untrusted_reason = untrusted_reason

    def scan(self) -> tuple[list[AgentDefinition], list[SkippedAgent]]:
        """The usable definitions here and the skipped ones; two files naming one agent
        both stay out (which one was meant is not ikigai's guess)."""
        try:
            entries = sorted(os.listdir(self.directory))
        except (FileNotFoundError, NotADirectoryError):
            return [], []
        except OSError as exc:
            reason = f"cannot read agent directory {self.directory}: {exc.strerror}"
            return [], [SkippedAgent(self.directory.name, self.name, reason, self.directory)]
        paths = [self.directory / entry for entry in entries
                 if entry.endswith(".md") and not entry.startswith(".")
                 and (self.directory / entry).is_file()]
        if self.untrusted_reason is not None:
            return [], [SkippedAgent(p.stem, self.name, self.untrusted_reason, p, "untrusted")
                        for p in paths]
        found = [read_definition(path, self.name) for path in paths]
        skipped = [each for each in found if isinstance(each, SkippedAgent)]
        by_name: dict[str, list[AgentDefinition]] = {}
        for each in found:
            if isinstance(each, AgentDefinition):
                by_name.setdefault(each.name, []).append(each)
        for name, same in by_name.items():
            if len(same) > 1:
                files = ", ".join(d.path.name for d in same)
                skipped += [SkippedAgent(name, self.name, f"agent '{name}' is defined by "
                                         f"{files}; rename one", d.path) for d in same]
        return [same[0] for same in by_name.values() if len(same) == 1], skipped


class AgentIndex(ByName[AgentDefinition, SkippedAgent]):
    """Every usable agent definition by name (sorted), plus the skipped ones."""

    def why_not(self, name: str) -> str:
        """One line saying why ``name`` is no usable agent, and what to do."""
        reason = next((s.reason for s in self.skipped if s.name == name
                       and s.kind != "ignored"), None)
        if reason is not None:
            return f"agent '{name}' was not loaded: {reason}"
        known = f"; known: {', '.join(self)}" if self else ""
        return f"unknown agent '{name}'{_did_you_mean(name, list(self))}{known}"

    def index(self) -> str | None:
        """The system prompt's section naming the agents a model that can fork may choose
        (``agent_fork``'s ``agent``), one bounded line each; ``None``: there are none. It
        holds no blank line, so it is one paragraph of the prompt
        (:func:`ikigai_core.prompt.with_section`)."""
        if not self:
            return None
        lines = "\n".join(agent.index_line() for agent in self.values())
        return ("## Agents\n"
                "Agent definitions you can fork by name: when a task matches one's "
                "description, call agent_fork with its name as agent; it brings its own "
                "instructions, tools and limits.\n" + lines)


def load_agent_definitions(home: Path, cwd: Path) -> AgentIndex:
    """The definitions of ``home/agents`` and of the project ``cwd`` is in (read only once
    trusted); the project's win on a name clash, the loser listed as ``ignored``."""
    layers = [AgentDirectory(home / "agents", name="user")]
    located = find_project_trust(cwd, home)
    if located is not None:
        project, untrusted = located
        layers.append(AgentDirectory(project / ".ikigai" / "agents", name="project",
                                     untrusted_reason=untrusted))
    winners: dict[str, AgentDefinition] = {}
    skipped: list[SkippedAgent] = []
    for layer in layers:
        found, broken = layer.scan()
        skipped += broken
        for agent in found:
            loser = winners.get(agent.name)
            if loser is not None:
                skipped.append(SkippedAgent(agent.name, loser.source, f"overridden by the "
                                            f"{agent.source} agent at {agent.path}",
                                            loser.path, "ignored"))
            winners[agent.name] = agent
    return AgentIndex(list(winners.values()), skipped)
