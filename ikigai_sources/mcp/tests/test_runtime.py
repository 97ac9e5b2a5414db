"""MCP at run time, against a real server that records what it receives (servers/recorder.py):
a timed-out call is cancelled on the wire, a changed tool list reaches the next request, an
interrupt stops a call at once, and a frozen server's restart is not charged to a call."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ikigai_mcp.sessions import CLOSE_TIMEOUT

from ikigai_core.app import App
from tests.support.procs import wait_gone
from tests.support.replies import REPLIES

from .conftest import pids

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
RECORDER = str(Path(__file__).with_name("servers") / "recorder.py")
WAIT = 60.0


@pytest.fixture
def recorder(servers, tmp_path, monkeypatch):
    """``recorder(delay, **entry)`` configures the recording server (its ``tools/list``
    answers ``delay`` seconds late once grown), lists it afresh (a warm cache, no server left) and
    returns the file its messages go to."""
    record = tmp_path / "record"
    monkeypatch.setenv("RECORD", str(record))

    def configure(delay: float = 0.0, **entry) -> Path:
        pidfile = servers({"rec": {"command": sys.executable, "args": [RECORDER, str(delay)],
                                   "env": {"EDGE_PIDS": os.environ["EDGE_PIDS"],
                                           "RECORD": str(record)}, **entry}})
        listed = subprocess.run([IKIGAI, "refresh"], capture_output=True, text=True,
                                cwd=tmp_path, timeout=WAIT, stdin=subprocess.DEVNULL)
        assert "Tools refreshed." in listed.stdout, listed.stderr
        assert all(wait_gone(pid) for pid in pids(pidfile))
        record.unlink()
        return record

    return configure


def received(record: Path) -> list[str]:
    """The methods the server received, in order."""
    return record.read_text().split() if record.exists() else []


def wait_for(what, timeout: float = WAIT):
    deadline = time.monotonic() + timeout
    while not (found := what()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)
    return found


def server_gone(tmp_path: Path) -> bool:
    return all(wait_gone(pid, timeout=10) for pid in pids(tmp_path / "pids"))


def test_tool_run_timeout_sends_the_cancel_before_the_session_closes(recorder, tmp_path):
    record = recorder()
    done = subprocess.run([IKIGAI, "tool", "run", "rec__wait", '{"seconds": 60}'],
                          capture_output=True, text=True, cwd=tmp_path, timeout=WAIT,
                          stdin=subprocess.DEVNULL, env={**os.environ, "IKIGAI_TOOL_TIMEOUT": "2"})
    assert json.loads(done.stdout)["error_code"] == "TOOL_TIMEOUT"
    assert done.returncode == 1
    assert server_gone(tmp_path)
    assert received(record)[-2:] == ["tools/call", "notifications/cancelled"]


def ask(tmp_path: Path, fake_server, *replies, **environ) -> subprocess.Popen[str]:
    """``ikigai ask --yes`` against the fake OpenAI server, which answers ``replies``."""
    fake_server.push(*replies)
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake_server.url,
           **environ}
    return subprocess.Popen([IKIGAI, "ask", "--yes", "--provider", "openai", "--no-stream",
                             "go"], cwd=tmp_path, env=env, text=True, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.parametrize(("delay", "runs"), [
    (0, 1), (2, 1),  # the re-listing answered at once, and 2 s late: each must be waited for
    pytest.param(0, 5, marks=pytest.mark.slow), pytest.param(2, 5, marks=pytest.mark.slow)])
def test_a_tool_added_during_a_call_is_in_the_next_request_every_time(
        recorder, fake_server, tmp_path, delay, runs):
    """Not now and then: each of ``runs`` asks from a listing without the tool has it in its
    next request (``-m slow`` repeats it to catch a race)."""
    openai = REPLIES["openai"]
    for _ in range(runs):
        recorder(delay)  # the cached listing is without the tool again
        asked = len(fake_server.requests)
        with ask(tmp_path, fake_server, openai.reply(calls=[("c1", "rec__grow", {})]),
                 openai.reply("Grown.")) as run:
            out, err = run.communicate(timeout=WAIT)
        assert run.returncode == 0 and "Grown." in out, err
        first, second = (request.json for request in fake_server.requests[asked:])
        names = {tool["function"]["name"] for tool in second["tools"]}
        assert "rec__extra" not in {tool["function"]["name"] for tool in first["tools"]}
        assert "rec__extra" in names, f"the re-listing ({delay} s late) was not waited for"
        assert server_gone(tmp_path)


def test_a_server_gone_before_its_re_listing_keeps_the_old_tools_without_a_wait(
        recorder, fake_server, tmp_path):
    recorder(startupTimeout=30)
    openai = REPLIES["openai"]
    started = time.monotonic()
    with ask(tmp_path, fake_server, openai.reply(calls=[("c1", "rec__vanish", {})]),
             openai.reply("Gone.")) as run:
        out, err = run.communicate(timeout=WAIT)
    assert run.returncode == 0 and "Gone." in out, err
    assert time.monotonic() - started < 20  # not the server's startupTimeout
    second = fake_server.requests[-1].json
    assert "rec__grow" in {tool["function"]["name"] for tool in second["tools"]}
    assert json.loads(second["messages"][-1]["content"])["error_code"] == "TOOL_CRASHED"


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_cancels_an_mcp_call_and_ikigai_exits_at_once(
        recorder, fake_server, tmp_path, sig, code):
    record = recorder()
    openai = REPLIES["openai"]
    with ask(tmp_path, fake_server, openai.reply(calls=[("c1", "rec__wait", {"seconds": 60})]),
             openai.reply("Never.")) as run:
        try:
            wait_for(lambda: "tools/call" in received(record))
            run.send_signal(sig)
            started = time.monotonic()
            assert run.wait(timeout=WAIT) == code
            took = time.monotonic() - started
        finally:
            run.kill()
    # at once: neither the 60 s call nor the session's close timeout is waited for
    assert took < CLOSE_TIMEOUT - 1, f"ikigai took {took:.1f} s to exit"
    assert received(record)[-1] == "notifications/cancelled"
    assert server_gone(tmp_path)


def test_a_frozen_servers_restart_is_not_charged_to_the_next_calls(recorder, tmp_path,
                                                                    monkeypatch):
    recorder()
    monkeypatch.setenv("IKIGAI_TOOL_TIMEOUT", "2")
    app = App(cwd=tmp_path)
    registry = app.registry()

    def call(name: str, arguments: dict) -> dict:
        return app.executor.call(registry, name, arguments).envelope

    assert call("rec__freeze", {"seconds": 60})["error_code"] == "TOOL_TIMEOUT"
    assert call("rec__wait", {"seconds": 0.5}) == {"tool_success": True,
                                                   "result": {"result": "waited"}}
    assert call("rec__wait", {"seconds": 0.5})["tool_success"] is True
    first, second = pids(tmp_path / "pids")[-2:]
    assert first != second and wait_gone(first)
