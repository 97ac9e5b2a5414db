"""Helpers for the fault suite: registry entries, the real ``ikigai`` CLI, leak checks."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from ikigai_core.plugins import get_plugin_manager
from ikigai_core.tools import Tool
from tests.support.procs import processes

USER_TOOLS_ONLY = {"IKIGAI_DISABLE_PLUGINS": "ikigai_tools_builtin.builtin"}
"""Plugin environment without the six built-in tools (their --schema would cost CPU)."""

KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY")


def user_tools_pm():
    """A plugin manager scanning only ``$IKIGAI_HOME/tools`` and ``./.ikigai/tools``."""
    return get_plugin_manager(load_entry_points=False, environ=USER_TOOLS_ONLY)


def as_tool(path: Path, parameters: Mapping | None = None) -> Tool:
    """The registry entry discovery would make for the executable at ``path``."""
    return Tool(
        name=path.name.removesuffix("-tool").replace("-", "_"),
        description="a fault-suite tool",
        parameters=dict(parameters or {"type": "object"}),
        command=(str(path),),
        source="user",
        path=path,
    )


def ikigai(
    *args: str, cwd: Path, input: str | None = None, env: Mapping[str, str] | None = None,
    timeout: float = 60, prefix: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """The real ``ikigai`` CLI as a subprocess, with no provider key unless ``env`` sets one;
    ``prefix`` goes before it (the ``unprivileged`` fixture's command, for one)."""
    environ = {k: v for k, v in os.environ.items() if k not in KEY_VARS}
    environ.update(env or {})
    return subprocess.run(
        [*prefix, sys.executable, "-m", "ikigai_core.cli", *args], cwd=cwd, input=input,
        capture_output=True, text=True, timeout=timeout, env=environ,
    )


def assert_one_line_error(proc: subprocess.CompletedProcess[str], code: int, *words: str) -> str:
    """``proc`` failed with exit ``code`` and one ``ikigai:`` line on stderr holding ``words``."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes whose process group is ``pgid``."""
    return [pid for pid, state, _, group in processes()
            if group == pgid and state not in ("Z", "X")]


def zombie_children() -> list[int]:
    """Children of this process that died and were never reaped."""
    me = os.getpid()
    return [pid for pid, state, ppid, _ in processes() if ppid == me and state == "Z"]


def temp_entries() -> set[str]:
    """What the temp directory holds right now."""
    return set(os.listdir(tempfile.gettempdir()))
