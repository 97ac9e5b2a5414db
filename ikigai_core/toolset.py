"""Which tools a request carries: the chosen ones, plus the tools of the skills loaded.

The choice comes from ``--tools a,b`` / ``--no-tools``, else from ``enabled_tools`` and
``disabled_tools`` in the config, and changes with ``/toolset`` in chat. A skill's own
tools (its ``tools/`` folder) are left out until the skill is loaded; from then on they,
and the tools its front matter names, are sent for the rest of the conversation.

What a request carries is also all that can run in reply to it: the session's tool boundary
(:mod:`ikigai_core.toolcalls`) hands the executor only those tools, so a call of any other is
``TOOL_NOT_FOUND`` (issue 21 item 11).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ikigai_core.errors import UsageError
from ikigai_core.skills import Skill, skill_tool_source

if TYPE_CHECKING:
    from ikigai_core.config import Settings
    from ikigai_core.tools import Tool


def parse_names(text: str) -> frozenset[str]:
    """``"bash, file_read grep"`` -> the names (commas and spaces both separate)."""
    return frozenset(text.replace(",", " ").split())


@dataclass
class Toolset:
    """The tools one conversation sends.

    :param selected: the chosen tool names; ``None`` means every tool.
    :param excluded: names left out when ``selected`` is ``None`` (``disabled_tools``).
    :param skills: the skills that may be loaded.
    :param loaded: the names of the skills loaded so far, in load order.
    :param origin: where the choice came from, for an error naming an unknown tool.
    :param within: the most it may ever send, the tools of skills loaded included
        (a forked child's: its ``tools`` limit, never wider than its parent's);
        ``None``: no bound.
    """

    selected: frozenset[str] | None = None
    excluded: frozenset[str] = frozenset()
    skills: Mapping[str, Skill] = field(default_factory=dict)
    loaded: list[str] = field(default_factory=list)
    origin: str = "--tools"
    within: frozenset[str] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @classmethod
    def chosen(cls, settings: Settings, skills: Mapping[str, Skill], *,
               tools: str | None = None, no_tools: bool = False) -> Toolset:
        """``--no-tools`` > ``--tools`` > ``enabled_tools``/``disabled_tools`` > every tool."""
        if no_tools or tools is not None:
            return cls(frozenset() if no_tools else parse_names(tools or ""), skills=skills)
        enabled = settings.enabled_tools
        return cls(None if enabled is None else frozenset(enabled),
                   frozenset(settings.disabled_tools), skills=skills,
                   origin="enabled_tools/disabled_tools in config.json")

    def choose(self, text: str, registry: Mapping[str, Tool]) -> None:
        """``/toolset all``, ``/toolset none`` or ``/toolset a,b``: unknown names are an error."""
        chosen = Toolset(None if text == "all" else frozenset() if text == "none"
                         else parse_names(text), origin="/toolset")
        chosen.verify(registry)
        self.selected, self.excluded = chosen.selected, chosen.excluded

    def verify(self, registry: Mapping[str, Tool]) -> None:
        """A one-line error if the choice names a tool ``registry`` does not have."""
        unknown = sorted(((self.selected or frozenset()) | self.excluded) - set(registry))
        if unknown:
            raise UsageError(f"{self.origin}: no tool named {', '.join(map(repr, unknown))}; "
                             "`ikigai tool list` shows the tools")

    def load(self, name: str) -> Skill:
        """Load the skill ``name`` (a second load changes nothing); unknown is an error."""
        skill = self.skills.get(name)
        if skill is None:
            known = ", ".join(self.skills) or "none are installed"
            raise UsageError(f"unknown skill '{name}'; skills: {known}")
        with self._lock:  # the model's load_skill calls arrive from worker threads
            if name not in self.loaded:
                self.loaded.append(name)
        return skill

    def unload(self, keep: Sequence[str] = ()) -> None:
        """Unload every skill but those in ``keep`` (chat's ``/clear``): their tools are
        no longer sent."""
        with self._lock:
            self.loaded[:] = [name for name in self.loaded if name in keep]

    def tools(self, registry: Mapping[str, Tool]) -> list[Tool]:
        """The tools to send, in registry (name) order."""
        with self._lock:
            loaded = [self.skills[name] for name in self.loaded]
        brought = {name for skill in loaded for name in skill.tools}
        sources = {skill_tool_source(skill) for skill in loaded}

        def wanted(tool: Tool) -> bool:
            if tool.name in brought or tool.source in sources:
                return self.within is None or tool.name in self.within
            if self.selected is None and tool.source.startswith("skill:"):
                return False
            return self.chooses(tool.name)

        return [tool for tool in registry.values() if wanted(tool)]

    def chooses(self, name: str) -> bool:
        """Whether the choice sends a tool ``name`` once it is found (a skill's own tools
        and those of the skills loaded aside): known before discovery."""
        if self.within is not None and name not in self.within:
            return False
        return name in self.selected if self.selected is not None else name not in self.excluded

    def describe(self, registry: Mapping[str, Tool]) -> str:
        """One line for ``/toolset``: what is sent, and the loaded skills."""
        names = [tool.name for tool in self.tools(registry)]
        line = f"Tools sent: {', '.join(names) if names else 'none'}"
        if self.loaded:
            line += f" (skills loaded: {', '.join(self.loaded)})"
        return line
