"""Build the plugin manager: hookspecs, default plugins, entry-point plugins, blocking."""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pluggy

from ikigai_core import hookspecs
from ikigai_core.defaults import DEFAULT_PLUGINS, ESSENTIAL_PLUGINS
from ikigai_core.entrypoints import plugin_entry_points
from ikigai_core.errors import UsageError
from ikigai_core.hookcall import one_line
from ikigai_core.notices import Notices

ENTRY_POINT_GROUP = "ikigai"
HOOK_PREFIX = "ikigai_"
"""What every hook's name, and every implementation's, starts with."""


class PluginManager(pluggy.PluginManager):
    """pluggy's manager with pytest's rule: only a name starting ``ikigai_`` can hold a hook
    (give a renamed implementation's ``specname`` a name with that prefix too). pluggy then
    inspects the few hook names of a plugin, not every name a plugin module has (most of
    a start-up's plugin registration time)."""

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        if not name.startswith(HOOK_PREFIX):
            return None
        return super().parse_hookimpl_opts(plugin, name)


def disabled_plugin_names(environ: Mapping[str, str] = os.environ) -> list[str]:
    """Plugin names listed in ``IKIGAI_DISABLE_PLUGINS`` (comma-separated)."""
    raw = environ.get("IKIGAI_DISABLE_PLUGINS", "")
    return [name.strip() for name in raw.split(",") if name.strip()]


def get_plugin_manager(
    *,
    load_entry_points: bool = True,
    environ: Mapping[str, str] = os.environ,
    cache_dir: Path | None = None,
    notices: Notices | None = None,
) -> pluggy.PluginManager:
    """A manager with every hookspec, the default plugins and, unless told not to,
    the plugins installed under the ``ikigai`` entry-point group (their list remembered
    in ``cache_dir`` when given; a broken one reported in ``notices``)."""
    pm = PluginManager("ikigai")
    pm.add_hookspecs(hookspecs)
    for name in disabled_plugin_names(environ):
        if name in ESSENTIAL_PLUGINS:
            raise UsageError(
                f"plugin '{name}' is essential and cannot be disabled; "
                "remove it from IKIGAI_DISABLE_PLUGINS (another plugin may replace what it does)"
            )
        pm.set_blocked(name)
    for modname in DEFAULT_PLUGINS:
        if not pm.is_blocked(modname):
            pm.register(importlib.import_module(modname), name=modname)
    if load_entry_points:
        notices = Notices() if notices is None else notices
        installed = load_entry_point_plugins(pm, cache_dir=cache_dir, notices=notices)
        _report_unknown_disabled(disabled_plugin_names(environ),
                                 [*DEFAULT_PLUGINS, *installed], notices)
    return pm


def _report_unknown_disabled(disabled: list[str], known: list[str], notices: Notices) -> None:
    """A name in ``IKIGAI_DISABLE_PLUGINS`` that is no plugin blocks nothing: say so."""
    for name in disabled:
        if name not in known:
            import difflib  # lazy: only a misspelled name needs a suggestion

            guess = difflib.get_close_matches(name, known, n=1)
            hint = f"did you mean '{guess[0]}'?" if guess else f"plugins: {', '.join(known)}"
            notices.report(f"IKIGAI_DISABLE_PLUGINS names no plugin '{name}'; {hint}")


def load_entry_point_plugins(
    pm: pluggy.PluginManager, group: str = ENTRY_POINT_GROUP, cache_dir: Path | None = None,
    *, notices: Notices,
) -> list[str]:
    """Register every plugin of the entry-point ``group``; a broken one is reported and skipped.

    Returns the name of every entry point of the group, registered or not.
    """
    entry_points = plugin_entry_points(group, cache_dir)
    for ep in entry_points:
        if pm.is_blocked(ep.name) or pm.get_plugin(ep.name) is not None:
            continue
        try:
            plugin = ep.load()
            pm.register(plugin, name=ep.name)
        except Exception as exc:  # a third party's bug must not take ikigai down
            notices.report(
                f"plugin '{ep.name}'{ep.label} failed to load: {one_line(exc)}; skipped. "
                f"Disable it with IKIGAI_DISABLE_PLUGINS={ep.name}", plugin=ep.name)
            continue
        unknown = _unknown_hooks(pm, ep.name)
        if unknown:
            pm.unregister(name=ep.name)
            notices.report(f"plugin '{ep.name}'{ep.label} implements {unknown}; skipped",
                           plugin=ep.name)
    return [ep.name for ep in entry_points]


def _unknown_hooks(pm: pluggy.PluginManager, name: str) -> str | None:
    """Describe the first hook ``name`` implements that no hookspec defines, if any."""
    for hook in pm.get_hookcallers(pm.get_plugin(name)) or ():
        if hook.spec is None and hook.name.startswith(HOOK_PREFIX):
            import difflib  # lazy: only a broken plugin needs a suggestion

            known = [h for h in dir(hookspecs) if h.startswith(HOOK_PREFIX)]
            guess = difflib.get_close_matches(hook.name, known, n=1)
            hint = f" (did you mean '{guess[0]}'?)" if guess else ""
            return f"unknown hook '{hook.name}'{hint}"
    return None
