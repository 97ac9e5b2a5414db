"""A stdio server's process: started through ``ikigai_tool_process`` (the environment
policy, the example env plugin, the sandbox), and nothing it started outlives ikigai."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ikigai_core.app import App
from tests.support.procs import pid_written, wait_gone
from tests.test_sandbox import needs_bwrap

from .conftest import edge, forking, pids

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
REAPER = str(Path(__file__).parents[1] / "ikigai_mcp" / "reaper.py")


def run(tmp_path: Path, name: str, arguments: dict) -> dict:
    done = subprocess.run([IKIGAI, "tool", "run", name, json.dumps(arguments)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60,
                          stdin=subprocess.DEVNULL)
    return json.loads(done.stdout)


def test_a_server_child_is_gone_after_tool_run(servers, tmp_path):
    kids = tmp_path / "kids"
    pidfile = servers({"edge": forking(kids)})
    assert run(tmp_path, "edge__incr", {})["result"] == {"result": 1}
    assert pids(pidfile) and pids(kids)
    assert all(wait_gone(pid) for pid in pids(pidfile) + pids(kids))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_nothing_a_server_started_outlives_ikigai(servers, tmp_path, sig):
    kids = tmp_path / "kids"
    pidfile = servers({"edge": forking(kids)})
    ikigai = subprocess.Popen([IKIGAI, "tool", "run", "edge__slow", '{"seconds": 60}'],
                              cwd=tmp_path, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        calls = Path(f"{pidfile}.calls")
        while not pids(kids) or not calls.exists():  # one session lists, then calls
            assert time.monotonic() < deadline, "the call never reached the server"
            time.sleep(0.05)
        ikigai.send_signal(sig)
        ikigai.wait(timeout=15)
        left = [pid for pid in pids(pidfile) + pids(kids) if not wait_gone(pid, timeout=10)]
        assert not left, f"{left} outlived ikigai ({sig!r})"
    finally:
        ikigai.kill()
        ikigai.wait()


def test_the_reaper_kills_a_child_that_ignores_sigterm(tmp_path):
    kid = tmp_path / "kid"
    script = f"trap '' TERM; sleep 1000 & echo $! > {kid}; wait"
    reaper = subprocess.Popen([sys.executable, "-I", "-S", REAPER, "sh", "-c", script],
                              stdin=subprocess.DEVNULL, start_new_session=True)
    kid_pid = pid_written(kid, timeout=10)
    started = time.monotonic()
    reaper.terminate()
    assert reaper.wait(timeout=10) == 128 + signal.SIGKILL  # sh ignored TERM: it got KILL
    assert time.monotonic() - started < 5
    assert wait_gone(kid_pid)


def test_a_command_the_reaper_cannot_start_is_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-I", "-S", REAPER, "no-such-server-anywhere"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 127
    assert done.stderr == "cannot start 'no-such-server-anywhere': No such file or directory\n"


def test_the_server_environment_goes_through_the_tool_process_hook(servers, isolated_home,
                                                                  tmp_path, monkeypatch):
    (isolated_home / "config.json").write_text(json.dumps({"tool_env": {"exclude": ["DROP_*"]}}))
    servers({"edge": edge(env={**edge()["env"], "OPENAI_API_KEY": "${OPENAI_API_KEY}",
                               "DROP_ME": "x", "KEEP_ME": "y", "MY_TOKEN": "t"})})
    for name, value in {"OPENAI_API_KEY": "sk-secret", "IKIGAI_ENV_SCRUB": "_TOKEN",
                        "UNRELATED": "ikigai's own", "LANG": "C.UTF-8"}.items():
        monkeypatch.setenv(name, value)
    app = App(cwd=tmp_path)
    registry = app.registry()
    seen = {name: app.executor.call(registry, "edge__env", {"name": name}).envelope["result"]
            ["result"] for name in ("OPENAI_API_KEY", "DROP_ME", "KEEP_ME", "MY_TOKEN",
                                    "UNRELATED", "LANG", "PATH")}
    assert seen["OPENAI_API_KEY"] == "<unset>"  # never a provider key, even asked for
    assert seen["DROP_ME"] == "<unset>"  # config.json's tool_env policy
    assert seen["MY_TOKEN"] == "<unset>"  # the example env plugin (IKIGAI_ENV_SCRUB)
    assert seen["UNRELATED"] == "<unset>"  # only the safe set of ikigai's environment
    assert (seen["KEEP_ME"], seen["LANG"]) == ("y", "C.UTF-8")
    assert seen["PATH"] == os.environ["PATH"]



@pytest.mark.parametrize("asked", [True, False], ids=["agents_api_mcp", "default"])
def test_a_server_gets_the_agents_api_only_when_the_setting_asks(
        asked, servers, isolated_home, tmp_path, approve_all, monkeypatch):
    """With ``agents_api_mcp`` an MCP server started while the API is served gets its
    address and the root's token; by default neither. Neither stays in ikigai's own
    environment once the API is gone: a later tool run gets none. An outer ikigai's
    (this one runs as its tool) never reaches the server."""
    from ikigai_core import Session
    from ikigai_core.orchestration import serving
    from tests.support.agents import AgentModel

    (isolated_home / "config.json").write_text(json.dumps({"agents_api_mcp": asked}))
    servers({"edge": edge()})
    monkeypatch.setenv("IKIGAI_API", "/outer/api.sock")
    monkeypatch.setenv("IKIGAI_API_TOKEN", "the outer ikigai's")
    both = [("edge__env", {"name": "IKIGAI_API"}), ("edge__env", {"name": "IKIGAI_API_TOKEN"})]
    model = AgentModel({"go": [both, "ok"]})
    app = App(environ={**os.environ, **model.environ}, cwd=tmp_path)
    try:
        with serving(Session.open(app, "openai", log=False)) as sup:
            sup.root.live.send("go")
            given = [sup.environ["IKIGAI_API"], sup.root.token] if asked else ["<unset>"] * 2
        seen = [json.loads(msg["content"])["result"]["result"]
                for msg in model.server.requests[-1].json["messages"] if msg["role"] == "tool"]
        assert seen == given
    finally:
        model.close()
    later = app.executor.call(app.registry(), "bash", {"command": "echo $IKIGAI_API"})
    assert later.envelope["result"]["output"].strip() == "/outer/api.sock"  # not ours


@needs_bwrap
def test_the_sandbox_wraps_a_server_like_any_tool_process(servers, tmp_path, monkeypatch):
    servers({"edge": {**edge(), "env": {}}})  # nothing to write outside the sandbox
    target = str(tmp_path / "out.txt")
    monkeypatch.setenv("IKIGAI_SANDBOX", "read-only")
    app = App(cwd=tmp_path)
    envelope = app.executor.call(app.registry(), "edge__write", {"path": target}).envelope
    assert envelope["result"] == {"result": "Read-only file system"}
    assert not Path(target).exists()
