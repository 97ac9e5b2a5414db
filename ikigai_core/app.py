"""What every command needs, built lazily: home, settings, plugins, registry."""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from ikigai_core.config import Settings, ikigai_home, load_settings
from ikigai_core.errors import IkigaiError

if TYPE_CHECKING:
    import pluggy

    from ikigai_core.discovery import Discovery
    from ikigai_core.outcome import ToolOutcome
    from ikigai_core.registry import Registry


class App:
    """One ikigai invocation: reads the environment once, builds each piece on first use."""

    def __init__(self, environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> None:
        self.environ = dict(os.environ if environ is None else environ)
        if cwd is not None:
            self.cwd = cwd

    @cached_property
    def cwd(self) -> Path:
        """The directory ikigai runs in (its ``.ikigai/tools`` is the project layer)."""
        try:
            return Path.cwd()
        except FileNotFoundError:
            raise IkigaiError(
                "the current directory no longer exists; cd to an existing directory"
            ) from None

    @cached_property
    def home(self) -> Path:
        """``$IKIGAI_HOME`` (default ``~/.ikigai``)."""
        return ikigai_home(self.environ)

    @cached_property
    def settings(self) -> Settings:
        """Defaults < config.json < environment."""
        return load_settings(self.home, self.environ)

    @cached_property
    def pm(self) -> pluggy.PluginManager:
        """The plugin manager with defaults and installed plugins."""
        from ikigai_core.plugins import get_plugin_manager

        return get_plugin_manager(environ=self.environ, cache_dir=self.home / "cache")

    def discovery(self, *, refresh: bool = False) -> Discovery:
        """A background discovery of this invocation's tools (not yet started)."""
        from ikigai_core.discovery import Discovery

        return Discovery(self.pm, home=self.home, cwd=self.cwd, settings=self.settings,
                         refresh=refresh)

    def registry(self, *, refresh: bool = False) -> Registry:
        """Discover now and return the registry."""
        from ikigai_core.discovery import discover

        return discover(self.pm, home=self.home, cwd=self.cwd, settings=self.settings,
                        refresh=refresh)

    def wrap(self, outcome: ToolOutcome) -> dict[str, Any]:
        """The envelope for ``outcome``, from the ``ikigai_wrap_result`` hook."""
        return dict(self.pm.hook.ikigai_wrap_result(outcome=outcome))

    def run_call(self, registry: Mapping[str, Any], name: str, arguments: Any) -> ToolOutcome:
        """Run one tool call in this invocation's directory and environment."""
        from ikigai_core.execution import run_call

        return run_call(registry, name, arguments, settings=self.settings, cwd=self.cwd,
                        env=self.environ)

    def call_tool(self, registry: Mapping[str, Any], name: str, arguments: Any) -> dict[str, Any]:
        """Run one tool call and return its envelope."""
        return self.wrap(self.run_call(registry, name, arguments))
