"""ikigai-mcp: MCP servers as an ikigai tool source, and ikigai's tools as an MCP server.

Built only on ikigai_core's plugin API and the official ``mcp`` SDK, which is imported
only on paths that talk to a server (a warm ``ikigai tool list`` never does).
"""

from __future__ import annotations

from pathlib import Path

CONFIG_NAME = "mcp.json"
DEFAULT_STARTUP_TIMEOUT = 10.0
"""Seconds a server has to start and list its tools (``startupTimeout`` overrides it)."""


def user_config(home: Path) -> Path:
    """``$IKIGAI_HOME/mcp.json``."""
    return home / CONFIG_NAME


def project_config(cwd: Path) -> Path:
    """``./.ikigai/mcp.json``."""
    return cwd / ".ikigai" / CONFIG_NAME
