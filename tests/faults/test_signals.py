"""SIGINT, SIGTERM or SIGKILL to ikigai while tools run: every tool's whole process group
goes down (grandchildren too, even one that ignores SIGTERM) and nothing is left running.
ikigai unwinds on the first two; on SIGKILL its watcher (``ikigai_core.orphan_guard``) acts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.faults.support import KEY_VARS, group_members
from tests.support.replies import REPLIES

EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGKILL: -9}
SIGNALS = pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL],
                                  ids=["SIGINT", "SIGTERM", "SIGKILL"])


def stubborn_tool(make_shell_tool, directory: Path, name: str, pids: Path) -> None:
    """A tool that starts a SIGTERM-ignoring grandchild, records its group, and hangs."""
    make_shell_tool(directory, f"{name}-tool", f"""\
        if [ "$1" = --schema ]; then
          echo '{{"name": "{name}", "description": "d", "parameters": {{"type": "object"}}}}'
          exit 0
        fi
        (trap '' TERM; exec sleep 60) &
        echo $$ > {pids}/{name}.tmp && mv {pids}/{name}.tmp {pids}/{name}
        exec sleep 60
        """)


def wait_for_groups(pids: Path, count: int, proc: subprocess.Popen) -> list[int]:
    deadline = time.monotonic() + 30
    while len(started := [p for p in pids.iterdir() if p.suffix != ".tmp"]) < count:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the tools never started"
        time.sleep(0.05)
    return [int(p.read_text()) for p in started]


def assert_all_gone(groups: list[int]) -> None:
    deadline = time.monotonic() + 5
    while any(group_members(g) for g in groups) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [g for g in groups if group_members(g)] == [], "a tool's process group survived"


def ikigai_popen(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.Popen:
    environ = {k: v for k, v in os.environ.items() if k not in KEY_VARS}
    return subprocess.Popen([sys.executable, "-m", "ikigai_core.cli", *args], cwd=cwd,
                            env={**environ, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@SIGNALS
def test_signal_during_tool_run_kills_the_whole_group(isolated_home, make_shell_tool, tmp_path,
                                                      sig):
    pids = tmp_path / "pids"
    pids.mkdir()
    stubborn_tool(make_shell_tool, isolated_home / "tools", "stuck", pids)
    proc = ikigai_popen("tool", "run", "stuck", "{}", cwd=tmp_path, env={})
    groups = wait_for_groups(pids, 1, proc)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == EXIT[sig] and "Traceback" not in err
    assert_all_gone(groups)


@SIGNALS
def test_signal_during_parallel_agent_calls_kills_every_group(
    approve_all, isolated_home, make_shell_tool, tmp_path, fake_server, sig
):
    pids = tmp_path / "pids"
    pids.mkdir()
    for name in ("one", "two", "three"):
        stubborn_tool(make_shell_tool, isolated_home / "tools", name, pids)
    calls = [(f"c{i}", name, {}) for i, name in enumerate(("one", "two", "three"))]
    fake_server.push(REPLIES["openai"].reply(calls=calls))
    env = {"OPENAI_API_KEY": "sk-x", "OPENAI_BASE_URL": fake_server.url}
    proc = ikigai_popen("ask", "--provider", "openai", "--no-stream", "go", cwd=tmp_path, env=env)
    groups = wait_for_groups(pids, 3, proc)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == EXIT[sig] and "Traceback" not in err, err
    assert_all_gone(groups)


@pytest.mark.slow  # a whole pytest run of the Ctrl-C tests (~19 s): guards the suite, not ikigai
def test_ctrl_c_tests_pass_when_pytest_starts_with_sigint_ignored():
    """``pytest &`` from a script starts pytest with SIGINT ignored, and every program it
    starts would inherit that: the Ctrl-C tests, in-process and through the CLI, must still
    pass (not fail, not hang)."""
    root = Path(__file__).resolve().parents[2]
    tests = ["tests/test_agent.py::test_ctrl_c_kills_running_tools_and_restores_the_conversation",
             "tests/test_cli_agent.py::test_ctrl_c_in_ask_kills_the_tool_and_exits_130"]
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "timeout=60", *tests],
        cwd=root, capture_output=True, text=True, timeout=110,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert ran.returncode == 0, ran.stdout[-3000:]
    assert "2 passed" in ran.stdout
