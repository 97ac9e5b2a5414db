"""Sub-agents in the session log and across the end of ikigai (issue 25): each child is a
session with its parent, fork point, agent and status; ``ikigai ask`` ended by SIGTERM
mid-child leaves no process and records the child ``interrupted``; one killed outright leaves
no process either, and has its children marked ``interrupted`` by the next start."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ikigai_core import App, Session
from ikigai_core.orchestration import Supervisor
from ikigai_core.sessions import DB_NAME
from ikigai_core.sqlite_store import SqliteStore
from tests.support.agents import AgentModel
from tests.support.procs import pid_written, wait_gone
from tests.test_subagents_runtime import slowly

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
TIMEOUT = 30


def _rows(home: Path) -> dict[str, object]:
    return {s.id: s for s in SqliteStore(home / DB_NAME).sessions()}


def test_each_child_is_recorded_with_its_parent_agent_and_status(tmp_path, isolated_home):
    model = AgentModel({"root": ["root answer"], "done-kid": ["kid answer"],
                        "killed-kid": [slowly("late", 5)]})
    app = App(environ={**os.environ, **model.environ}, cwd=tmp_path)
    root = Session.open(app, "openai")
    root.send("root")
    sup = Supervisor.for_session(root)
    done, killed = sup.fork("done-kid"), sup.fork("killed-kid")
    [result] = sup.wait([done], TIMEOUT)
    sup.kill(killed)
    sup.close()
    model.close()

    rows = _rows(isolated_home)
    kid = rows[result.transcript]
    assert (kid.parent, kid.fork_turn, kid.agent, kid.status) == (root.id, 0, "agent", "done")
    assert rows[sup.list()[1].transcript].status == "killed"
    assert not (isolated_home / "agents-running").exists() or not any(
        (isolated_home / "agents-running").iterdir())


def _ask_with_a_sleeping_child(tmp_path: Path, pid_file: Path) -> tuple[AgentModel, subprocess.Popen]:
    model = AgentModel({
        "plan": [[("agent_fork", {"prompt": "sleeper"})], [("agent_wait", {"timeout": 25})],
                 "never"],
        "sleeper": [[("bash", {"command": f"echo $$ > {pid_file}; exec sleep 60"})], "never"]})
    proc = subprocess.Popen([IKIGAI, "ask", "--yes", "plan"], env={**os.environ, **model.environ},
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return model, proc


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
def test_sigterm_or_sighup_mid_child_leaves_no_process_and_records_it_interrupted(
        tmp_path, isolated_home, signum):
    """``kill`` or a closed terminal: the children and their tools are stopped."""
    pid_file = tmp_path / "pid"
    model, proc = _ask_with_a_sleeping_child(tmp_path, pid_file)
    tool = pid_written(pid_file)
    proc.send_signal(signum)
    proc.communicate(timeout=TIMEOUT)
    model.close()

    assert wait_gone(tool, timeout=10)
    statuses = [s.status for s in _rows(isolated_home).values() if s.parent is not None]
    assert statuses == ["interrupted"]


def test_a_killed_ikigai_leaves_no_childs_tool_and_the_next_start_marks_it_interrupted(
        tmp_path, isolated_home):
    pid_file = tmp_path / "pid"
    model, proc = _ask_with_a_sleeping_child(tmp_path, pid_file)
    tool = pid_written(pid_file)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=TIMEOUT)
    assert wait_gone(tool, timeout=10)  # ikigai's watcher killed the child's tool
    [child] = [s for s in _rows(isolated_home).values() if s.parent is not None]
    assert child.status == "running"

    model.server.push()  # the next start: any conversation that can fork
    app = App(environ={**os.environ, **model.environ}, cwd=tmp_path)
    Supervisor.for_session(Session.open(app, "openai")).close()
    model.close()

    assert _rows(isolated_home)[child.id].status == "interrupted"
    assert list((isolated_home / "agents-running").iterdir()) == []
