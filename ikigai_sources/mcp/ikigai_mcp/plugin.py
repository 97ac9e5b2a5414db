"""The ``mcp`` plugin (entry point): MCP servers as tool sources, the ``ikigai mcp`` commands.

Kept light: a warm ``ikigai tool list`` imports neither the ``mcp`` SDK nor ``jsonschema``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ikigai_core import hookimpl

if TYPE_CHECKING:
    from ikigai_core import ProcessSpec
    from ikigai_core.notices import Notices


@hookimpl
def ikigai_tool_sources(home: Path, cwd: Path, refresh: bool,
                        prepare_process: Callable[[ProcessSpec], None],
                        notices: Notices) -> list[Any]:
    """One source per configured MCP server (``mcp:NAME``), and one for the broken entries.

    A stdio server's process goes through ``prepare_process`` (the ``ikigai_tool_process``
    hook); a server failing in the background is reported in ``notices``."""
    from ikigai_core.project import find_project

    root = find_project(cwd, ikigai_home=home)
    if not _any_config(home, root):  # most start-ups: nothing to read, nothing to import
        return []
    from ikigai_mcp.servers import Problems, configured_at

    servers = configured_at(home, root)
    sources: list[Any] = []
    if servers.configs:  # the session machinery is imported only when a server is configured
        from ikigai_mcp.listing import ListingCache
        from ikigai_mcp.source import McpSource

        cache = ListingCache(home)
        sources = [McpSource(c, home, cache, refresh=refresh, prepare=prepare_process,
                             notices=notices) for c in servers.configs.values()]
    return [*sources, Problems(servers.skipped)] if servers.skipped else sources


def _any_config(home: Path, root: Path | None) -> bool:
    """Whether the user's ``mcp.json`` or the one of the project at ``root`` exists."""
    from ikigai_mcp import project_config, user_config

    return user_config(home).exists() or (root is not None and project_config(root).exists())


@hookimpl
def ikigai_tools_changed() -> bool:
    """True once after a running server said ``notifications/tools/list_changed``."""
    if "ikigai_mcp.source" not in sys.modules:  # no session was ever opened
        return False
    from ikigai_mcp.source import tools_changed

    if tools_changed.is_set():
        tools_changed.clear()
        return True
    return False


@hookimpl
def ikigai_commands() -> list[Any]:
    """``ikigai mcp add|list|remove|serve``."""
    from ikigai_mcp.commands import mcp_group

    return [mcp_group]
