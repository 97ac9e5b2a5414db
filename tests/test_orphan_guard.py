"""The watcher that kills a dead ikigai's tools (``ikigai_core.orphan_guard``): one process
per ikigai, in a session of its own, gone when ikigai ends; a watcher killed is replaced
and told every running group. SIGKILL through the CLI: tests/faults/test_signals.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ikigai_core import orphan_guard
from ikigai_core.process import run_process
from tests.support.procs import pid_alive, pid_written, processes, wait_gone

IKIGAI = str(Path(sys.executable).with_name("ikigai"))


def watchers_of(pid: int) -> list[int]:
    """The watchers process ``pid`` started."""
    return [child for child, _, parent, _ in processes() if parent == pid
            and orphan_guard.WATCHER.encode() in Path(f"/proc/{child}/cmdline").read_bytes()]


def test_the_watcher_runs_in_its_own_session_and_ends_with_ikigai(isolated_home, tmp_path,
                                                                   make_shell_tool):
    pid, gate = tmp_path / "pid", tmp_path / "gate"
    make_shell_tool(isolated_home / "tools", "gated-tool", f"""\
        if [ "$1" = --schema ]; then
          echo '{{"name": "gated", "description": "d", "parameters": {{"type": "object"}}}}'
          exit 0
        fi
        echo $$ > {pid}
        until [ -e {gate} ]; do sleep 0.05; done
        echo '{{"ok": true}}'
        """)
    proc = subprocess.Popen([IKIGAI, "tool", "run", "gated", "{}"], cwd=tmp_path,
                            env={**os.environ, "OPENAI_API_KEY": "sk-secret"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid_written(pid)
    [watcher] = watchers_of(proc.pid)
    assert os.getsid(watcher) == watcher != os.getsid(proc.pid)  # Ctrl-C and SIGHUP miss it
    assert Path(f"/proc/{watcher}/environ").read_bytes() == b""  # no key in its keeping
    gate.touch()
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert wait_gone(watcher), "the watcher outlived ikigai"


@pytest.fixture
def guarded(monkeypatch):
    """The guard on in this process (as the ``ikigai`` program has it); its watcher closed
    after the test."""
    monkeypatch.setattr(orphan_guard, "_enabled", True)
    monkeypatch.setattr(orphan_guard, "_groups", set())
    monkeypatch.setattr(orphan_guard, "_watcher", None)
    yield
    watcher = orphan_guard._watcher
    if watcher is not None:
        watcher.stdin.close()
        watcher.wait(10)


def test_a_killed_watcher_is_replaced_and_told_the_groups_still_running(guarded, tmp_path):
    run_process(["true"], stdin=None, timeout=10, max_stdout=100)
    assert orphan_guard._watcher is not None
    first = orphan_guard._watcher.pid
    assert pid_alive(first)
    os.kill(first, signal.SIGKILL)
    assert wait_gone(first)

    pid_file, results = tmp_path / "pid", []
    sleeper = threading.Thread(target=lambda: results.append(run_process(
        ["sh", "-c", f"echo $$ > {pid_file}; exec sleep 60"], stdin=None, timeout=60,
        max_stdout=100)))
    sleeper.start()
    tool = pid_written(pid_file)
    assert orphan_guard._watcher is not None
    assert orphan_guard._watcher.pid != first
    with orphan_guard._lock:  # as when ikigai dies: the watcher's pipe closes
        dying, orphan_guard._watcher = orphan_guard._watcher, None
    dying.stdin.close()
    dying.wait(10)
    sleeper.join(10)
    assert not sleeper.is_alive() and not pid_alive(tool)
    assert results[0].exit_code == 128 + signal.SIGKILL
