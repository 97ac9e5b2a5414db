"""What every command needs, built lazily: home, settings, plugins, registry, executor.

Also the way to embed ikigai as a library: ``App(cwd=...)``, then
``Session.open(app, ...)`` (:mod:`ikigai_core.session`) for a conversation with a model
(see docs/embedding.md), or ``app.registry()`` and ``app.executor.call(...)`` for tools
alone; nothing is printed, what went wrong is in ``app.notices``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ikigai_core.errors import IkigaiError
from ikigai_core.notices import Notices

if TYPE_CHECKING:
    import pluggy

    from ikigai_core.agent_definitions import AgentIndex
    from ikigai_core.config import Settings
    from ikigai_core.discovery import Discovery
    from ikigai_core.execution import ToolExecutor
    from ikigai_core.hookcall import Notifier
    from ikigai_core.lifecycle import CallContext, ProcessSpec
    from ikigai_core.registry import Registry
    from ikigai_core.skills import SkillIndex
    from ikigai_core.tools import ToolSource


class App:
    """One ikigai invocation: reads the environment once, builds each piece on first use.

    :param environ: the environment (default: this process's).
    :param cwd: the directory to run in (default: the current one).
    :param notices: where the core reports what it could not do (default: collected only).
    """

    def __init__(
        self, environ: Mapping[str, str] | None = None, cwd: Path | None = None,
        notices: Notices | None = None,
    ) -> None:
        self.environ = dict(os.environ if environ is None else environ)
        self.notices = Notices() if notices is None else notices
        self._ask_user: Callable[[str], str | None] | None = None
        self.served_sources: list[ToolSource] = []
        """Tool sources discovered only while something serves them (the agents API's
        ``agent_*`` tools)."""
        self.served_environ: dict[str, str] = {}
        """Variables every server process (purpose ``server``: an MCP server) gets while
        something serves them (the agents API's, with ``agents_api_mcp``); never written
        into :attr:`environ`, so nothing outlives what serves them."""
        self._project: tuple[Path, Path | None] | None = None
        self.stored_keys: dict[str, str] = {}
        """Where each provider's key that ``ikigai keys`` stored, now in :attr:`environ`,
        came from (``keyring`` or ``keys.json``): a rejected one is named as such."""
        if cwd is not None:
            self.cwd = cwd

    @property
    def ask_user(self) -> Callable[[str], str | None] | None:
        """How plugins may ask the user a question; an interactive front end sets it
        (see :class:`~ikigai_core.lifecycle.CallContext`)."""
        return self._ask_user

    @ask_user.setter
    def ask_user(self, ask: Callable[[str], str | None] | None) -> None:
        self._ask_user = ask
        if "executor" in self.__dict__:
            self.executor.context = self.context

    @cached_property
    def cwd(self) -> Path:
        """The directory ikigai runs in (and tools run in)."""
        try:
            return Path.cwd()
        except FileNotFoundError:
            raise IkigaiError(
                "the current directory no longer exists; cd to an existing directory"
            ) from None

    @property
    def project(self) -> Path | None:
        """The project directory: the nearest ancestor of :attr:`cwd` (itself included)
        holding ``.ikigai/`` or ``AGENTS.md``, below the user's home; ``None`` outside every
        project. Found once for the :attr:`cwd` (a walk up the tree, a ``stat`` a level):
        a marker a tool makes later moves no boundary (``CallContext.project``)."""
        if self._project is None or self._project[0] != self.cwd:
            from ikigai_core.project import find_project

            self._project = (self.cwd, find_project(self.cwd, ikigai_home=self.home))
        return self._project[1]

    @cached_property
    def home(self) -> Path:
        """``$IKIGAI_HOME`` (default ``~/.ikigai``)."""
        from ikigai_core.statefiles import ikigai_home

        return ikigai_home(self.environ)

    @cached_property
    def settings(self) -> Settings:
        """Defaults < config.json < environment."""
        from ikigai_core.config import load_settings

        return load_settings(self.home, self.environ)

    @cached_property
    def pm(self) -> pluggy.PluginManager:
        """The plugin manager with defaults and installed plugins."""
        from ikigai_core.plugins import get_plugin_manager

        return get_plugin_manager(environ=self.environ, cache_dir=self.home / "cache",
                                  notices=self.notices)

    @cached_property
    def skills(self) -> SkillIndex:
        """Every skill of every layer, read once per invocation."""
        from ikigai_core.skills import collect_skills

        return collect_skills(self.pm, home=self.home, cwd=self.cwd, notices=self.notices)

    @cached_property
    def agents(self) -> AgentIndex:
        """Every agent definition of the user's and the trusted project's, read once."""
        from ikigai_core.agent_definitions import load_agent_definitions

        return load_agent_definitions(self.home, self.cwd)

    def discovery(self, *, refresh: bool = False) -> Discovery:
        """A background discovery of this invocation's tools (not yet started)."""
        from ikigai_core.discovery import Discovery

        return Discovery(self.pm, **self._discovery_options(refresh))

    def registry(self, *, refresh: bool = False) -> Registry:
        """Discover now and return the registry."""
        from ikigai_core.discovery import discover

        return discover(self.pm, **self._discovery_options(refresh))

    def _discovery_options(self, refresh: bool) -> dict[str, Any]:
        from ikigai_core.skills import skill_tool_sources

        return dict(home=self.home, cwd=self.cwd, settings=self.settings, refresh=refresh,
                    notices=self.notices, prepare_process=self.prepare_process,
                    extra_sources=[*skill_tool_sources(self.skills), *self.served_sources])

    @property
    def context(self) -> CallContext:
        """Where and for whom this invocation's tool calls run."""
        from ikigai_core.lifecycle import CallContext

        return CallContext(cwd=self.cwd, home=self.home, environ=self.environ,
                           settings=self.settings, project=self.project,
                           ask_user=self.ask_user, notices=self.notices)

    @cached_property
    def executor(self) -> ToolExecutor:
        """Runs this invocation's tool calls (one path: hooks, process, envelope)."""
        from ikigai_core.execution import ToolExecutor

        return ToolExecutor(self.pm, self.context, self.notices, process_hook=self._process_hook)

    def executor_asking(self, ask: Callable[[str], str | None] | None, *,
                        environ: Mapping[str, str] | None = None,
                        notices: Notices | None = None) -> ToolExecutor:
        """A new executor like :attr:`executor`, whose calls ask ``ask`` (a session's),
        whose tool processes get ``environ`` on top of this invocation's, and which
        reports to ``notices`` (default: this invocation's)."""
        from ikigai_core.execution import ToolExecutor

        notices = self.notices if notices is None else notices  # an empty one is falsy
        context = self.context.replace(ask_user=ask, environ={**self.environ, **(environ or {})},
                                       notices=notices)
        return ToolExecutor(self.pm, context, notices, process_hook=self._process_hook)

    @cached_property
    def _process_hook(self) -> Notifier:
        from ikigai_core.hookcall import Notifier

        return Notifier(self.pm, "ikigai_tool_process", self.notices)

    def prepare_process(self, spec: ProcessSpec) -> None:
        """Let the ``ikigai_tool_process`` plugins change ``spec`` before a tool process
        starts (calls and ``--schema`` alike), without building the executor. A server's
        process gets :attr:`served_environ` first, so the plugins judge it too."""
        if spec.purpose == "server":
            spec.env.update(self.served_environ)
        self._process_hook(spec=spec, context=self.context)
