"""Streamable HTTP both ways, live: a real MCPServer on 127.0.0.1 configured by ``url`` and
``headers``, and ``ikigai mcp serve --http PORT`` driven by the SDK's own HTTP client."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.support.cli import run
from tests.support.procs import wait_gone

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
WEB = str(Path(__file__).with_name("servers") / "web.py")
WAIT = 30.0
"""Seconds any wait of this module gives up after."""


def first_line(process: subprocess.Popen[bytes], timeout: float = WAIT) -> str:
    """The first line ``process`` writes on stdout, within ``timeout``."""
    assert process.stdout is not None
    fd, data, deadline = process.stdout.fileno(), b"", time.monotonic() + timeout
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        assert left > 0 and select.select([fd], [], [], left)[0], "no line within the timeout"
        chunk = os.read(fd, 4096)
        assert chunk, f"it exited first: {data!r}"
        data += chunk
    return data.decode().strip()


def stop(process: subprocess.Popen[bytes], sig: int = signal.SIGINT) -> None:
    """``sig`` (SIGINT: a user's Ctrl-C); it must be gone within the timeout."""
    process.send_signal(sig)
    try:
        process.wait(timeout=WAIT)
    finally:
        process.kill()
        process.wait()


@pytest.fixture
def web_server():
    """The URL of servers/web.py, running for this test."""
    with subprocess.Popen([sys.executable, WEB], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL) as process:
        try:
            yield first_line(process)
        finally:
            stop(process, signal.SIGTERM)


def ikigai(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([IKIGAI, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=WAIT, stdin=subprocess.DEVNULL)


def test_an_http_server_through_tool_list_and_tool_run_with_its_headers(
        servers, web_server, tmp_path, monkeypatch):
    monkeypatch.setenv("WEB_TOKEN", "s3cret")
    servers({"web": {"url": web_server,
                     "headers": {"Authorization": "Bearer ${WEB_TOKEN}", "X-Team": "ikigai"}}})
    listed = ikigai(tmp_path, "tool", "list")
    assert "web__header" in listed.stdout and "web__incr" in listed.stdout, listed.stderr
    for name, sent, real in (("authorization", "Bearer s3cret", True),
                             ("x-team", "ikigai", False)):  # the same path, in this process
        ran = run("tool", "run", "web__header", json.dumps({"name": name}), cwd=tmp_path,
                  real=real, timeout=WAIT)
        assert json.loads(ran.stdout) == {"tool_success": True, "result": {"result": sent}}, (
            ran.stderr)
    ran = run("tool", "run", "web__header", "{}", cwd=tmp_path, real=False)
    assert json.loads(ran.stdout)["error_code"] == "INVALID_PARAMS"
    listed = ikigai(tmp_path, "mcp", "list", "--json")
    [row] = json.loads(listed.stdout)
    assert (row["transport"], row["state"], row["tools"]) == ("http", "ok", 2)


def test_an_http_session_is_kept_across_calls(servers, web_server, tmp_path):
    from ikigai_core.app import App

    servers({"web": {"url": web_server}})
    app = App(cwd=tmp_path)
    registry = app.registry()
    counts = [app.executor.call(registry, "web__incr", {}).envelope["result"] for _ in range(3)]
    assert counts == [{"result": 1}, {"result": 2}, {"result": 3}]


def test_an_http_server_that_is_not_there_is_skipped_with_a_reason(servers, tmp_path):
    port = free_port()  # a port nobody listens on
    servers({"gone": {"url": f"http://127.0.0.1:{port}/mcp", "startupTimeout": 5}})
    started = time.monotonic()
    listed = ikigai(tmp_path, "tool", "list")
    assert time.monotonic() - started < 15
    assert "MCP server 'http://127.0.0.1" in listed.stderr and "not usable" in listed.stderr


# -- ikigai mcp serve --http -----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listening(port: int, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"nothing listens on {port}"
            time.sleep(0.05)


def test_serve_http_driven_by_the_sdk_client(tmp_path):
    (tmp_path / "notes.txt").write_text("served over http\n")
    port = free_port()
    serving = subprocess.Popen([IKIGAI, "mcp", "serve", "--http", str(port)], cwd=tmp_path,
                               stdin=subprocess.DEVNULL)
    try:
        listening(port)

        async def work():
            with anyio.fail_after(WAIT):
                async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read,
                                                                                     write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        return (await session.list_tools(),
                                await session.call_tool("bash", {"command": "echo hi"}),
                                await session.call_tool("file_read", {"file_path": "notes.txt"}),
                                await session.call_tool("file_read", {"file_path": 7}))

        listed, bash, read, bad = anyio.run(work)
    finally:
        stop(serving)
    assert serving.returncode is not None
    assert {"bash", "file_read"} <= {tool.name for tool in listed.tools}
    assert not bash.is_error and bash.structured_content["output"].strip() == "hi"
    assert read.structured_content == {"output": "served over http\n"}
    assert bad.is_error and json.loads(bad.content[0].text)["error_code"] == "INVALID_PARAMS"
    assert wait_gone(serving.pid)
