"""Which MCP servers this invocation uses: ``$IKIGAI_HOME/mcp.json``, then the project's
``PROJECT/.ikigai/mcp.json`` once the project directory is trusted (a project server replaces
a user server of the same name). The project is found as the scanner finds it
(:func:`ikigai_core.project.find_project`). A project's ``${VAR}`` reads only what the
``tool_env`` policy hands a tool: never a provider key unless ``tool_env.include`` names it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from ikigai_core import SkippedTool, ToolScan
from ikigai_core.errors import ConfigError
from ikigai_core.project import find_project
from ikigai_core.trust import TrustStore, untrusted_reason
from ikigai_mcp import project_config, user_config
from ikigai_mcp.config import (
    McpConfigError,
    ServerConfig,
    load,
    read_raw,
)


@dataclass
class Servers:
    """The servers to use, and every configured server that cannot be used, with why."""

    configs: dict[str, ServerConfig] = field(default_factory=dict)
    skipped: list[SkippedTool] = field(default_factory=list)


def configured(home: Path, cwd: Path, environ: Mapping[str, str] = os.environ) -> Servers:
    """Read both files; a broken file or entry is a skipped entry, never an exception."""
    return configured_at(home, find_project(cwd, ikigai_home=home), environ)


def configured_at(home: Path, root: Path | None,
                  environ: Mapping[str, str] = os.environ) -> Servers:
    """:func:`configured`, the project's ``root`` (``None``: no project) already found."""
    servers = Servers()
    _add(servers, user_config(home), "user", environ)
    project = project_config(root) if root is not None else None
    if root is not None and project is not None and project.exists():
        if TrustStore(home).is_trusted(root):
            try:
                withheld = withheld_from_projects(home, environ)
            except ConfigError as exc:  # fail closed: no policy, no project server
                servers.skipped.append(SkippedTool(project.name, "mcp", f"{exc}; the "
                                                   "project's MCP servers are left out", project))
            else:
                _add(servers, project, "project", environ, withheld)
        else:
            reason = untrusted_reason(root)
            try:
                names = list(read_raw(project))
            except McpConfigError as exc:
                names, reason = [project.name], str(exc)
            servers.skipped += [SkippedTool(name, f"mcp:{name}", reason, project, "untrusted")
                                for name in names]
    found = list(servers.configs.values())
    servers.configs = {config.name: replace(config, before=tuple(found[:index]))
                       for index, config in enumerate(found)}
    return servers


def withheld_from_projects(home: Path, environ: Mapping[str, str]) -> frozenset[str]:
    """The variables of ``environ`` a project's ``mcp.json`` may not read: those the
    ``tool_env`` policy of ``home/config.json`` keeps from a tool (every provider key, and
    any variable holding one's value, unless ``tool_env.include`` names it).

    :raises ConfigError: ``config.json`` or its ``tool_env`` cannot be read.
    """
    from ikigai_core.config import load_settings
    from ikigai_core.defaults.tool_env import filter_env, provider_key_vars

    policy = load_settings(home, environ).tool_env
    return frozenset(environ).difference(
        filter_env(environ, policy, provider_key_vars(home / "cache")))


def _add(servers: Servers, path: Path, scope: str, environ: Mapping[str, str],
         withheld: frozenset[str] = frozenset()) -> None:
    try:
        found = load(path, scope, environ, withheld)
    except McpConfigError as exc:
        servers.skipped.append(SkippedTool(path.name, "mcp", str(exc), path))
        return
    for config in found:
        if isinstance(config, McpConfigError):
            servers.skipped.append(SkippedTool(config.server or path.name, "mcp", str(config),
                                               path))
        else:
            servers.configs[config.name] = config


class Problems:
    """A source holding only what could not be used (a broken ``mcp.json``, an untrusted one)."""

    name = "mcp"
    precedence = 0

    def __init__(self, skipped: list[SkippedTool]) -> None:
        self.skipped = skipped

    def scan(self) -> ToolScan:
        """Nothing to run: only the reasons."""
        return ToolScan(skipped=self.skipped)
