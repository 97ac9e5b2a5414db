"""Default plugin: the six built-in tools, installed as ``*-tool`` scripts (source ``system``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ikigai_core import SkippedTool, ToolScan, hookimpl
from ikigai_core.tool_directory import DirectorySource
from ikigai_toolkit.install import IN_VENV, scripts_dir

BUILTIN_SCRIPTS = (
    "bash-tool",
    "file-edit-tool",
    "file-read-tool",
    "file-write-tool",
    "glob-tool",
    "grep-tool",
)
AGENT_SCRIPTS = ("agent-fork-tool", "agent-kill-tool", "agent-list-tool", "agent-send-tool",
                 "agent-wait-tool")
"""The sub-agent tools: sent only while the agents API is served (:func:`agent_tools`)."""
SYSTEM_PRECEDENCE = 0


def scripts_dirs() -> list[Path]:
    """Where pip may have put this installation's console scripts, most likely first (in a
    virtual environment, only its ``bin``)."""
    dirs = [Path(scripts_dir())]
    if not IN_VENV:
        import sysconfig

        dirs += [Path(sys.executable).parent,
                 Path(sysconfig.get_path("scripts", f"{os.name}_user"))]
    return list(dict.fromkeys(dirs))


class BuiltinSource(DirectorySource):
    """The six scripts pip installed with ikigai-core; a missing one is reported."""

    def __init__(self) -> None:
        dirs = scripts_dirs()
        found = next((d for d in dirs if (d / BUILTIN_SCRIPTS[0]).exists()), dirs[0])
        super().__init__(found, name="system", precedence=SYSTEM_PRECEDENCE, only=BUILTIN_SCRIPTS)

    def scan(self) -> ToolScan:
        """The installed scripts, plus one skipped entry for each that is missing."""
        scan = super().scan()
        seen = {c.path.name for c in scan.candidates if c.path} | {
            s.path.name for s in scan.skipped if s.path}
        missing = [
            SkippedTool(script.removesuffix("-tool").replace("-", "_"), self.name,
                        f"built-in {script} is not installed in {self.directory}; "
                        "reinstall ikigai-core", self.directory / script)
            for script in BUILTIN_SCRIPTS if script not in seen
        ]
        return ToolScan(scan.candidates, [*scan.skipped, *missing])


@hookimpl
def ikigai_tool_sources() -> list[DirectorySource]:
    """The installed built-in scripts, and ``<prefix>/libexec/ikigai`` if present."""
    return [
        BuiltinSource(),
        DirectorySource(Path(sys.prefix) / "libexec" / "ikigai", name="system",
                        precedence=SYSTEM_PRECEDENCE),
    ]


def agent_tools() -> DirectorySource:
    """The installed ``agent_*`` tools (source ``agents``), which a conversation serving the
    agents API adds to its discovery (issue 25)."""
    dirs = scripts_dirs()
    found = next((d for d in dirs if (d / AGENT_SCRIPTS[0]).exists()), dirs[0])
    return DirectorySource(found, name="agents", precedence=SYSTEM_PRECEDENCE, only=AGENT_SCRIPTS)
