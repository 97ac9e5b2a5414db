"""``ikigai refresh`` says what changed since the registry the user last had (issue 22,
item 18): any command that found the tools (``tool list``, ``ask``, ``chat``) counts, not
only the last ``refresh``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

IKIGAI = str(Path(sys.executable).with_name("ikigai"))


def ikigai(*args: str, cwd: Path) -> str:
    done = subprocess.run([IKIGAI, *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_added_means_added_since_the_previous_listing(isolated_home, make_tool, tmp_path):
    tools = isolated_home / "tools"
    ikigai("refresh", cwd=tmp_path)
    make_tool(tools, "seen-tool")
    assert "seen" in ikigai("tool", "list", cwd=tmp_path)  # the user has it now
    make_tool(tools, "new-tool")
    changes = ikigai("refresh", cwd=tmp_path).splitlines()[1:]
    assert changes == ["Added: new"]
    (tools / "seen-tool").unlink()
    ikigai("tool", "list", cwd=tmp_path)
    assert ikigai("refresh", cwd=tmp_path).splitlines()[1:] == []
