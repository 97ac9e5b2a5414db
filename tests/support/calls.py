"""Run one tool call along the executor's one path, as the agent and ``tool run`` do."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pluggy

from ikigai_core.config import Settings
from ikigai_core.execution import ToolExecutor
from ikigai_core.lifecycle import CallContext
from ikigai_core.notices import Notices
from ikigai_core.project import find_project
from ikigai_core.tools import Tool


def executor(pm: pluggy.PluginManager, *, settings: Settings, home: Path | None = None,
             notices: Notices | None = None) -> ToolExecutor:
    """An executor in the current directory and environment."""
    home = home or Path(os.environ.get("IKIGAI_HOME", "."))
    context = CallContext(cwd=Path.cwd(), home=home, environ=dict(os.environ), settings=settings,
                          project=find_project(Path.cwd(), ikigai_home=home))
    return ToolExecutor(pm, context, Notices() if notices is None else notices)


def call_tool(pm: pluggy.PluginManager, registry: Mapping[str, Tool], name: str, arguments: Any,
              *, settings: Settings) -> dict[str, Any]:
    """The envelope of one call of ``name``."""
    return executor(pm, settings=settings).call(registry, name, arguments).envelope
