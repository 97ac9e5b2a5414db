"""``chat`` starts every MCP server's session in the background: before the first prompt,
without delaying it, without delaying the exit; a server that fails then is reported."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.procs import wait_gone
from tests.support.replies import REPLIES

from .conftest import edge, pids

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
WAIT = 30.0


def wait_for(what, timeout: float = WAIT):
    deadline = time.monotonic() + timeout
    while not (found := what()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return found


@pytest.fixture
def chat_env(fake_server, servers, tmp_path):
    """A warm listing of the edge server (60 s to start: a wait for it is plain), and chat's
    environment (the fake provider)."""
    from ikigai_mcp import sessions

    from ikigai_core.app import App

    pidfile = servers({"edge": edge(startupTimeout=60)})
    assert "edge__incr" in App(cwd=tmp_path).registry()  # listed here, as `tool list` lists
    sessions.close_all()
    assert all(wait_gone(pid) for pid in pids(pidfile))
    return {**os.environ, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake_server.url}


def start_chat(tmp_path: Path, env: dict) -> subprocess.Popen[bytes]:
    return subprocess.Popen([IKIGAI, "chat", "--yes", "--provider", "openai", "--no-stream"],
                            cwd=tmp_path, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def read_until(stream, needle: bytes, timeout: float = WAIT) -> bytes:
    fd, data, deadline = stream.fileno(), b"", time.monotonic() + timeout
    while needle not in data:
        left = deadline - time.monotonic()
        assert left > 0 and select.select([fd], [], [], left)[0], f"no {needle!r}: {data!r}"
        chunk = os.read(fd, 65536)
        assert chunk, f"ended before {needle!r}: {data!r}"
        data += chunk
    return data


def test_chat_starts_the_server_before_the_first_prompt(chat_env, fake_server, tmp_path):
    pidfile = tmp_path / "pids"
    before = len(pids(pidfile))
    with start_chat(tmp_path, chat_env) as chat:
        try:
            wait_for(lambda: len(pids(pidfile)) > before)  # no prompt sent yet
            server = pids(pidfile)[-1]
            fake_server.push(REPLIES["openai"].reply(calls=[("c1", "edge__incr", {})]),
                             REPLIES["openai"].reply("Counted."))
            out, err = chat.communicate(b"count\n", timeout=WAIT)
        finally:
            chat.kill()
    assert b"Counted." in out, err
    sent = fake_server.requests[-1].json["messages"][-1]["content"]
    assert json.loads(sent) == {"tool_success": True, "result": {"result": 1}}
    assert pids(pidfile)[-1] == server  # no second server was started
    assert wait_gone(server)


def test_a_server_hanging_at_start_delays_neither_the_prompt_nor_the_exit(
        chat_env, fake_server, tmp_path):
    (tmp_path / "mode").write_text("hang")  # the cached listing says it works; now it hangs
    pidfile = tmp_path / "pids"
    before = len(pids(pidfile))
    fake_server.push(REPLIES["openai"].reply("Hello."))
    with start_chat(tmp_path, chat_env) as chat:
        try:
            wait_for(lambda: len(pids(pidfile)) > before)
            started = time.monotonic()
            chat.stdin.write(b"hi\n")
            chat.stdin.flush()
            read_until(chat.stdout, b"Hello.")
            assert time.monotonic() - started < 20  # not the 60 s the server may take
            started = time.monotonic()
            chat.stdin.close()
            assert chat.wait(timeout=WAIT) == 0
            # the SDK's 2 s grace, then the reaper; not the server's 60 s
            assert time.monotonic() - started < 20
        finally:
            chat.kill()
    assert wait_gone(pids(pidfile)[-1])


def test_a_server_failing_in_the_background_is_reported_and_left_out(chat_env, tmp_path):
    (tmp_path / "mode").write_text("exit")
    with start_chat(tmp_path, chat_env) as chat:
        try:
            err = read_until(chat.stderr, b"ikigai refresh")
            chat.stdin.close()
            assert chat.wait(timeout=WAIT) == 0
        finally:
            chat.kill()
    line = err.decode().splitlines()[-1]
    assert "MCP server 'edge' is not usable" in line and "edge: told to fail" in line
    listed = subprocess.run([IKIGAI, "mcp", "list", "--json"], capture_output=True, text=True,
                            cwd=tmp_path, timeout=WAIT)
    [row] = json.loads(listed.stdout)
    assert row["state"] == "failed" and "told to fail" in row["error"]
