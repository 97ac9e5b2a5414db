"""The call boundary: what reaches a tool, and what ikigai says when a call cannot start
(issue 21 items 8 and 11, issue 22 items 3 and 16)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

IKIGAI = str(Path(sys.executable).with_name("ikigai"))


def ikigai(*args: str, cwd: Path, stdin: int | None = None,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The installed ``ikigai`` as a real subprocess (60 s at most)."""
    return subprocess.run([IKIGAI, *args], cwd=cwd, stdin=stdin, env=env, capture_output=True,
                          text=True, timeout=60)


def test_tool_run_without_arguments_is_a_usage_error_naming_what_to_pass(tmp_path):
    ran = ikigai("tool", "run", "bash", cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert (ran.returncode, ran.stdout) == (2, "")
    assert ran.stderr == (
        "ikigai: no arguments for tool 'bash': pass a JSON object, as "
        "`ikigai tool run bash '{...}'` or on stdin (`ikigai tool show bash` lists its "
        "parameters)\n")
    blank = ikigai("tool", "run", "bash", " \n", cwd=tmp_path)
    assert (blank.returncode, blank.stderr) == (2, ran.stderr)
