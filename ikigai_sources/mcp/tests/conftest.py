"""Fixtures for ikigai-mcp: MCP servers configured in a fresh ``$IKIGAI_HOME``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

EDGE = str(Path(__file__).with_name("servers") / "edge.py")
BIN = Path(sys.executable).parent


@pytest.fixture(autouse=True)
def closed_sessions():
    """Every session a test opened in this process is closed after it (no server leaks)."""
    yield
    from ikigai_mcp import sessions

    sessions.close_all()


@pytest.fixture
def servers(isolated_home, tmp_path, monkeypatch):
    """``servers({"edge": {...}})`` writes ``$IKIGAI_HOME/mcp.json``; edge servers log pids."""
    pids = tmp_path / "pids"
    monkeypatch.setenv("EDGE_PIDS", str(pids))
    monkeypatch.setenv("EDGE_MODE", str(tmp_path / "mode"))
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ['PATH']}")

    def write(entries: dict) -> Path:
        path = isolated_home / "mcp.json"
        path.write_text(json.dumps({"mcpServers": entries}))
        return pids

    return write


def pids(path: Path) -> list[int]:
    """The pids a test server wrote to ``path``, a line each (none before it exists)."""
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def edge(mode: str = "normal", **extra) -> dict:
    """The ``mcp.json`` entry of the edge server in ``mode``."""
    return {"command": sys.executable, "args": [EDGE, mode],
            "env": {name: os.environ.get(name, "") for name in ("EDGE_PIDS", "EDGE_MODE")},
            **extra}


def forking(kids: Path) -> dict:
    """The edge server behind ``sh``, which first starts a ``sleep`` it never waits for
    (its pid goes to ``kids``): a server that starts a child of its own, as npx starts node.
    The ``sleep`` even holds the server's stdout open."""
    entry = edge()
    script = 'sleep 1000 & echo $! >> "$KIDS"; exec "$@"'
    return {**entry, "command": "sh", "args": ["-c", script, "sh", entry["command"],
                                               *entry["args"]],
            "env": {**entry["env"], "KIDS": str(kids)}}
