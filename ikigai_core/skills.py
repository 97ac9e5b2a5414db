"""Skills: markdown that teaches the model a domain and introduces its tools.

A skill is a directory holding ``SKILL.md`` (the Agent Skills format: YAML front matter
with ``name`` and ``description``, then markdown), or a single ``NAME.md`` file (seed 002).
It may name the tools it introduces (``tools:`` in the front matter) and carry its own
``*-tool`` executables in a ``tools/`` folder. Skills come from sources, like tools:
system (plugins) < user (``$IKIGAI_HOME/skills``) < project (``./.ikigai/skills``).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ikigai_core.errors import ConfigError
from ikigai_core.hookcall import collect, one_line
from ikigai_core.record import Record
from ikigai_core.registry import ByName
from ikigai_core.statefiles import check_private, refuse_exposed
from ikigai_core.tools import (
    TOOL_NAME_RE,
    SkippedTool,
    ToolCandidate,
    ToolScan,
    ToolSource,
    source_problem,
)
from ikigai_toolkit.skillfile import (
    LOAD_SKILL_SCHEMA,
    SKILL_FILE,
    SkillFileError,
    read_skill_file,
)
from ikigai_toolkit.skillfile import MAX_SKILL_BYTES as MAX_SKILL_BYTES  # re-exported

if TYPE_CHECKING:
    import pluggy

    from ikigai_core.notices import Notices

SKILL_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""Skill names: what ``/load NAME`` and the ``load_skill`` tool can carry unquoted."""
INDEX_LINE_CHARS = 160
"""The bound on one skill's line in the system prompt's index."""


class Skill(Record):
    """One usable skill.

    :param name: how the user and the model name it.
    :param description: when to use it (one line in the system prompt's index).
    :param path: its ``SKILL.md`` or ``NAME.md``.
    :param body: the markdown after the front matter: what loading the skill gives the model.
    :param source: the source that found it (``system``, ``user``, ``project``, ...).
    :param tools: the tools its front matter names.
    :param tools_dir: its ``tools/`` folder of ``*-tool`` executables, if it has one.
    """

    name: str
    description: str
    path: Path
    body: str
    source: str
    tools: tuple[str, ...] = ()
    tools_dir: Path | None = None

    def index_line(self) -> str:
        """``- name: description`` on one line of at most :data:`INDEX_LINE_CHARS`."""
        line = " ".join(f"- {self.name}: {self.description}".split())
        return line if len(line) <= INDEX_LINE_CHARS else line[: INDEX_LINE_CHARS - 1] + "…"

    def __repr__(self) -> str:
        return f"Skill(name={self.name!r}, source={self.source!r}, path={self.path!r})"


class SkippedSkill(SkippedTool):
    """A skill that is not usable, and why: ``name``, ``source``, ``reason`` (one line for
    the user), ``path``, and ``kind``: ``invalid``, ``untrusted`` (project not trusted) or
    ``ignored`` (overridden by a later layer)."""


class SkillScan(Record):
    """What one skill source found: usable skills and skipped ones (like
    :class:`~ikigai_core.tools.ToolScan`)."""

    skills: Sequence[Skill] = ()
    skipped: Sequence[SkippedSkill] = ()


@runtime_checkable
class SkillSource(Protocol):
    """A place skills come from. Returned by the ``ikigai_skill_sources`` hook.

    On a skill-name clash the source with the higher ``precedence`` wins
    (system 0 < user 10 < project 20), as for tools.
    """

    name: str
    precedence: int

    def scan(self) -> SkillScan:
        """Find and read this source's skills."""
        ...


PRIVATE_LAYERS = ("user", "project")
"""The skill layers ssh's rule covers (an installed plugin's may well be an administrator's)."""


def read_skill(path: Path, source: str) -> Skill | SkippedSkill:
    """Read one skill file: ``DIR/SKILL.md`` (front matter required) or ``NAME.md``
    (front matter optional; the name is the file's, the description its first line of text)."""
    agent_skill = path.name == SKILL_FILE
    fallback = path.parent.name if agent_skill else path.stem

    def skipped(reason: str) -> SkippedSkill:
        return SkippedSkill(fallback, source, reason, path)

    try:
        if source in PRIVATE_LAYERS:  # its text steers the model: others must not write it
            check_private(path)
        front, body = read_skill_file(path)
    except (ConfigError, SkillFileError) as exc:
        return skipped(str(exc))
    meta = parse_front_matter(front)
    if isinstance(meta, str):
        return skipped(meta)
    meta = meta or {}
    name = meta.get("name", None if agent_skill else fallback)
    if not isinstance(name, str) or not SKILL_NAME_RE.fullmatch(name):
        return skipped(f"front matter 'name' must be 1-64 of A-Z a-z 0-9 _ -, got {name!r:.40}")
    description = meta.get("description", None if agent_skill else _first_line(body))
    if not isinstance(description, str) or not description.strip():
        return SkippedSkill(name, source, "no description: add 'description:' to the front "
                            "matter saying when to use the skill", path)
    tools = meta.get("tools", [])
    if isinstance(tools, str):
        tools = tools.replace(",", " ").split()
    if not isinstance(tools, list) or not all(
            isinstance(t, str) and TOOL_NAME_RE.fullmatch(t) for t in tools):
        return SkippedSkill(name, source, "front matter 'tools' must be a list of tool names",
                            path)
    tools_dir = path.parent / "tools" if agent_skill else None
    if source in PRIVATE_LAYERS and tools_dir is not None and tools_dir.is_dir():
        try:  # its tools are code: one others could have written is never run
            for each in (tools_dir, *tools_dir.iterdir()):
                refuse_exposed(each)
        except ConfigError as exc:
            return SkippedSkill(name, source, str(exc), path)
    return Skill(name, " ".join(description.split()), path, body.strip(), source, tuple(tools),
                 tools_dir if tools_dir is not None and tools_dir.is_dir() else None)


def parse_front_matter(front: str | None) -> dict[str, Any] | str | None:
    """The front matter's YAML text as a mapping (``None`` when there is none), or a
    one-line reason (a ``str``) when it is broken."""
    if front is None:
        return None
    import yaml  # lazy: only reading skills needs it

    try:
        # libyaml's loader when PyYAML has it: 6x faster over 50 skills (bench_prompt.py)
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        meta = yaml.load(front, Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 2}" if where is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        return f"bad front matter{line}: {problem}"
    if not isinstance(meta, dict):
        return "front matter must be a mapping (name: ..., description: ...)"
    return meta


def _first_line(body: str) -> str | None:
    """A seed-002 skill's description: its first line of text, else its title."""
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    text = next((line for line in lines if not line.startswith("#")), None)
    return text or next((line.lstrip("#").strip() for line in lines), None)


class SkillDirectory:
    """Every skill in one directory: ``NAME/SKILL.md`` folders and ``NAME.md`` files.

    :param directory: the directory to scan; a missing one holds no skills.
    :param name: the source name users see.
    :param precedence: higher wins on a name clash.
    :param untrusted_reason: when given, the skills are listed as ``untrusted`` with this
        reason, and not read.
    """

    def __init__(self, directory: Path, *, name: str, precedence: int,
                 untrusted_reason: str | None = None) -> None:
        self.directory = Path(directory)
        self.name = name
        self.precedence = precedence
        self.untrusted_reason = untrusted_reason

    def __repr__(self) -> str:
        return f"SkillDirectory({str(self.directory)!r}, name={self.name!r})"

    def scan(self) -> SkillScan:
        """Read every skill here; a broken one is skipped with its reason."""
        try:
            entries = sorted(os.listdir(self.directory))
        except (FileNotFoundError, NotADirectoryError):
            return SkillScan()
        except OSError as exc:
            reason = f"cannot read skill directory {self.directory}: {exc.strerror}"
            return SkillScan(skipped=[SkippedSkill(self.directory.name, self.name, reason)])
        paths = [p for p in (self._skill_file(entry) for entry in entries) if p is not None]
        if self.untrusted_reason is not None:
            return SkillScan(skipped=[
                SkippedSkill(p.parent.name if p.name == SKILL_FILE else p.stem, self.name,
                             self.untrusted_reason, p, "untrusted") for p in paths])
        found = [read_skill(path, self.name) for path in paths]
        return SkillScan([s for s in found if isinstance(s, Skill)],
                         [s for s in found if isinstance(s, SkippedSkill)])

    def _skill_file(self, entry: str) -> Path | None:
        if entry.startswith("."):
            return None
        path = self.directory / entry
        if entry.endswith(".md") and path.is_file():
            return path
        if (path / SKILL_FILE).is_file():
            return path / SKILL_FILE
        return None


class SkillIndex(ByName[Skill, SkippedSkill]):
    """Every usable skill by name (sorted), plus the skipped ones; built once, read-only."""

    def index(self) -> str | None:
        """The system prompt's section listing every skill, one bounded line each."""
        if not self:
            return None
        lines = "\n".join(skill.index_line() for skill in self.values())
        return ("## Skills\n"
                "Skills hold instructions for particular tasks. When a task matches one, call "
                "the load_skill tool with its name before you start: its instructions come "
                "back, and the tools it brings are yours from the next turn.\n" + lines)


def collect_skills(pm: pluggy.PluginManager, *, home: Path, cwd: Path,
                   notices: Notices) -> SkillIndex:
    """Scan every source every plugin gives; a later layer wins on a name clash (the
    loser is skipped as ``ignored``). A broken plugin or source is reported and skipped."""
    found: list[tuple[int, Skill]] = []
    skipped: list[SkippedSkill] = []
    for plugin, source in collect(pm, "ikigai_skill_sources", notices, source_problem,
                                  home=home, cwd=cwd):
        try:
            scan = source.scan()
        except Exception as exc:
            notices.report(f"plugin '{plugin}' failed scanning skill source '{source.name}': "
                           f"{one_line(exc)}; its skills are skipped", plugin=plugin)
            continue
        found += [(source.precedence, s) for s in scan.skills if isinstance(s, Skill)]
        skipped += [s for s in scan.skipped if isinstance(s, SkippedSkill)]
    winners: dict[str, Skill] = {}
    for _, skill in sorted(found, key=lambda pair: pair[0]):
        if skill.name in winners:
            loser = winners[skill.name]
            skipped.append(SkippedSkill(skill.name, loser.source, f"overridden by the "
                                        f"{skill.source} skill at {skill.path}", loser.path,
                                        "ignored"))
        winners[skill.name] = skill
    return SkillIndex(list(winners.values()), skipped)


SKILL_TOOL_PRECEDENCE = -10
"""A skill's own tools lose to every other tool of the same name."""
LOAD_SKILL = "load_skill"


def skill_tool_source(skill: Skill) -> str:
    """The source name of the tools in ``skill``'s ``tools/`` folder."""
    return f"skill:{skill.name}"


class LoadSkillSource:
    """The ``load_skill`` tool, given the skills it may load; there only when there are some."""

    name = "system"
    precedence = 0

    def __init__(self, skills: Mapping[str, Skill]) -> None:
        self.skills = skills

    def scan(self) -> ToolScan:
        """One candidate with its schema known (no ``--schema`` call), or none."""
        if not self.skills:
            return ToolScan()
        command = (sys.executable, "-m", "ikigai_tools_builtin.load_skill_tool",
                   *(f"{skill.name}={skill.path}" for skill in self.skills.values()))
        return ToolScan([ToolCandidate(LOAD_SKILL, command, schema=LOAD_SKILL_SCHEMA)])


def skill_tool_sources(skills: Mapping[str, Skill]) -> list[ToolSource]:
    """The tool sources skills bring: ``load_skill``, and each skill's ``tools/`` folder
    (discovered and cached like any tool, advertised only once the skill is loaded)."""
    from ikigai_core.tool_directory import DirectorySource

    sources: list[ToolSource] = [LoadSkillSource(skills)]
    sources += [DirectorySource(skill.tools_dir, name=skill_tool_source(skill),
                                precedence=SKILL_TOOL_PRECEDENCE)
                for skill in skills.values() if skill.tools_dir is not None]
    return sources
