"""What ``ikigai plugins`` reports: each registered plugin, its distribution and hooks.

Apart from :mod:`ikigai_core.plugins`, which every start-up imports to build the manager.
"""

from __future__ import annotations

from typing import NamedTuple

import pluggy

from ikigai_core import __version__
from ikigai_core.defaults import DEFAULT_PLUGINS
from ikigai_core.entrypoints import plugin_entry_points
from ikigai_core.plugins import ENTRY_POINT_GROUP


class PluginInfo(NamedTuple):
    """One registered plugin, as ``ikigai plugins`` shows it."""

    name: str
    distribution: str | None
    version: str | None
    hooks: tuple[str, ...]
    builtin: bool


def list_plugins(pm: pluggy.PluginManager) -> list[PluginInfo]:
    """Every registered plugin with its distribution, version and hooks, sorted by name."""
    # Plugins are registered one by one (so a broken one can be skipped), which leaves
    # pluggy's list_plugin_distinfo() empty: the entry point names the distribution.
    dists = {ep.name: ep for ep in plugin_entry_points(ENTRY_POINT_GROUP)}
    infos = []
    for name, plugin in pm.list_name_plugin():
        if plugin is None:
            continue
        dist = dists.get(name)
        builtin = name in DEFAULT_PLUGINS
        hooks = tuple(sorted(h.name for h in pm.get_hookcallers(plugin) or ()))
        infos.append(
            PluginInfo(
                name=name,
                distribution=dist.distribution if dist else ("ikigai-core" if builtin else None),
                version=dist.version if dist else (__version__ if builtin else None),
                hooks=hooks,
                builtin=builtin,
            )
        )
    return sorted(infos, key=lambda info: info.name)
