"""Tools that misbehave on purpose: each gets the right envelope promptly, its whole process
group is gone afterwards, no zombie, no leaked descriptor or temp file, bounded memory.

Already proven elsewhere (see docs/reliability.md): exact output limits, stderr flood with
valid JSON (tests/test_execution.py), a tool deleted or made non-executable between
discovery and execution, SIGTERM-ignoring tools at the process level (tests/test_process.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from ikigai_core.config import Settings
from ikigai_core.execution import execute
from ikigai_core.process import KILL_GRACE
from tests.faults.support import as_tool, group_members, temp_entries, zombie_children
from tests.support.procs import open_fd_count, wait_gone
from tests.support.tools import write_shell_tool

MIB = 1024 * 1024
TIMEOUT = 1.0
PY = sys.executable

# name: (script after "echo $$ > PIDFILE", argument size, expected code, words, seconds allowed)
MISBEHAVIOURS = {
    "hangs_before_reading_stdin": ("exec sleep 30", MIB, "TOOL_TIMEOUT", "timed out after 1.0 s",
                                   TIMEOUT + KILL_GRACE + 2),
    "ignores_sigterm": ("trap '' TERM; sleep 30; sleep 30", 10, "TOOL_TIMEOUT", "timed out",
                        TIMEOUT + KILL_GRACE + 2),
    "grandchild_keeps_stdout": ("sleep 30 & echo '{\"ok\": 1}'", 10, None, "", 2),
    "grandchild_ignores_sigterm": ("(trap '' TERM; exec sleep 30) & echo '{\"ok\": 1}'", 10,
                                   None, "", 2),
    "floods_stdout": ("exec yes", 10, "INVALID_OUTPUT", "more than 65536 bytes", 2),
    "floods_stderr_then_json": ("head -c 5000000 /dev/zero >&2; echo '{\"ok\": 1}'", 10, None,
                                "", 5),
    "invalid_utf8": ("printf '{\"a\": \"\\377\"}'", 10, "INVALID_OUTPUT", "not valid UTF-8", 2),
    "json_array": ("echo '[1, 2]'", 10, "INVALID_OUTPUT", "JSON array, not an object", 2),
    "two_objects": ("echo '{} {}'", 10, "INVALID_OUTPUT", "data after the JSON value", 2),
    "nothing": ("exit 0", 10, "INVALID_OUTPUT", "output is empty", 2),
    "nan": ("echo '{\"a\": NaN}'", 10, "INVALID_OUTPUT", "NaN", 2),
    "float_overflow": ("echo '{\"a\": 1e999999}'", 10, "INVALID_OUTPUT", "too large", 2),
    "segfault": ("kill -SEGV $$", 10, "TOOL_CRASHED", "crashed with exit code 139", 2),
    "sigkill": ("kill -KILL $$", 10, "TOOL_CRASHED", "crashed with exit code 137", 2),
    "closes_stdin_mid_write": (
        f"exec {PY} -c 'import os, sys; sys.stdin.buffer.read(1000); os.close(0); "
        "print(\"{}\")'", MIB, None, "", 3),
    "exits_without_reading_1mb": ("echo '{}'", MIB, None, "", 2),
}


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """A temp directory of its own, to see whether a call leaves anything in it."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setenv("TMPDIR", str(scratch))
    return scratch


@pytest.mark.parametrize("name", sorted(MISBEHAVIOURS))
def test_misbehaving_tool_gets_its_envelope_and_leaves_nothing(tmp_path, private_tmp, name):
    script, size, code, words, allowed = MISBEHAVIOURS[name]
    pidfile = tmp_path / "pid"
    tool = as_tool(write_shell_tool(tmp_path, "bad-tool", f"echo $$ > {pidfile}\n{script}\n"))
    fds, temps = open_fd_count(), temp_entries()
    started = time.monotonic()
    outcome = execute(tool, {"pad": "x" * size}, settings=Settings(tool_timeout=TIMEOUT))
    elapsed = time.monotonic() - started
    assert outcome.error_code == code, outcome
    assert words in (outcome.error or "")
    assert elapsed < allowed, f"{name} took {elapsed:.1f} s"
    pgid = int(pidfile.read_text())
    assert wait_gone(pgid, KILL_GRACE + 3)
    deadline = time.monotonic() + KILL_GRACE + 3
    while group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert group_members(pgid) == [], f"{name}: a process of the tool's group survived"
    assert zombie_children() == []
    assert open_fd_count() == fds
    assert temp_entries() == temps


FLOOD = """\
import json, sys
from ikigai_core.config import Settings
from ikigai_core.execution import execute
from tests.faults.support import as_tool
from pathlib import Path
outcome = execute(as_tool(Path(sys.argv[1])), {}, settings=Settings(tool_timeout=60))
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec from the (big) pytest parent
peak_kib = int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1])
print(json.dumps({"code": outcome.error_code, "peak_kib": peak_kib,
                  "stderr": len(outcome.stderr or ""), "stdout": len(outcome.stdout or "")}))
"""


def peak_rss(tool: Path) -> dict:
    """Run the executor on ``tool`` in a fresh interpreter; its outcome and peak RSS."""
    proc = subprocess.run([PY, "-c", FLOOD, str(tool)], capture_output=True, text=True,
                          timeout=120, cwd=Path(__file__).parents[2], check=True)
    return json.loads(proc.stdout)


def flood_figures(tmp_path, megabytes: int) -> tuple[dict, dict, dict]:
    """Peak RSS for a quiet tool, a stdout flood and a stderr flood of ``megabytes`` MB."""
    size = megabytes * MIB
    quiet = peak_rss(write_shell_tool(tmp_path, "quiet-tool", "echo '{}'"))
    out = peak_rss(write_shell_tool(tmp_path, "out-tool", f"head -c {size} /dev/zero"))
    err = peak_rss(write_shell_tool(
        tmp_path, "err-tool", f"head -c {size} /dev/zero >&2; echo '{{\"ok\": 1}}'"))
    print(f"\n[figure] peak RSS of the ikigai process: quiet tool {quiet['peak_kib'] / 1024:.1f} MiB,"
          f" {megabytes} MB stdout flood {out['peak_kib'] / 1024:.1f} MiB,"
          f" {megabytes} MB stderr flood {err['peak_kib'] / 1024:.1f} MiB")
    return quiet, out, err


def assert_bounded(quiet: dict, out: dict, err: dict) -> None:
    assert out["code"] == "INVALID_OUTPUT" and err["code"] is None
    for flood in (out, err):
        grown = (flood["peak_kib"] - quiet["peak_kib"]) / 1024
        assert grown < 32, f"a flood grew the ikigai process by {grown:.0f} MiB"


def test_output_flood_keeps_memory_bounded(tmp_path):
    assert_bounded(*flood_figures(tmp_path, 20))


@pytest.mark.slow
def test_200_mb_flood_keeps_memory_bounded(tmp_path):
    assert_bounded(*flood_figures(tmp_path, 200))


def test_vanished_tool_files_between_discovery_and_call_leave_no_fd(tmp_path):
    """Deleted, de-executabled and replaced-by-a-directory tools: envelopes, no leak."""
    fds = open_fd_count()
    gone = write_shell_tool(tmp_path, "gone-tool", "echo '{}'")
    noexec = write_shell_tool(tmp_path, "noexec-tool", "echo '{}'")
    dirtool = write_shell_tool(tmp_path, "dir-tool", "echo '{}'")
    tools = [as_tool(path) for path in (gone, noexec, dirtool)]
    gone.unlink()
    noexec.chmod(0o644)
    dirtool.unlink()
    dirtool.mkdir()
    codes = [execute(tool, {}, settings=Settings()).error_code for tool in tools]
    assert codes == ["TOOL_NOT_FOUND", "TOOL_CRASHED", "TOOL_CRASHED"]
    assert open_fd_count() == fds and zombie_children() == []
    assert os.path.isdir(dirtool)
