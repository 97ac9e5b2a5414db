"""``ikigai mcp serve`` driven by the official SDK's own stdio client."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.support.tools import write_tool

from .conftest import edge

IKIGAI = str(Path(sys.executable).with_name("ikigai"))


def session_run(cwd: Path, work, *args: str):
    """Start ``ikigai mcp serve ARGS`` and run ``work(session)`` on an initialised session."""
    import os

    params = StdioServerParameters(command=IKIGAI, args=["mcp", "serve", *args], cwd=str(cwd),
                                   env={k: v for k, v in os.environ.items()
                                        if k.startswith("IKIGAI_")})

    async def main():
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await work(session)

    return anyio.run(main)


def test_serve_lists_and_calls_ikigai_tools(servers, tmp_path):
    servers({"edge": edge()})  # MCP-sourced tools must not be served again
    (tmp_path / "notes.txt").write_text("served ok\n")

    async def work(session):
        listed = await session.list_tools()
        bash = await session.call_tool("bash", {"command": "echo hi"})
        read = await session.call_tool("file_read", {"file_path": "notes.txt"})
        bad = await session.call_tool("file_read", {"file_path": 7})
        return listed, bash, read, bad

    listed, bash, read, bad = session_run(tmp_path, work)
    names = {tool.name for tool in listed.tools}
    assert {"bash", "file_read", "grep"} <= names
    assert not any(name.startswith("edge__") for name in names)
    schema = next(t for t in listed.tools if t.name == "file_read").input_schema
    assert "file_path" in schema["properties"]
    assert not bash.is_error and bash.structured_content["output"].strip() == "hi"
    assert json.loads(bash.content[0].text) == bash.structured_content
    assert read.structured_content == {"output": "served ok\n"}
    assert bad.is_error
    assert json.loads(bad.content[0].text)["error_code"] == "INVALID_PARAMS"


def test_serve_only_the_tools_asked_for(tmp_path):
    async def work(session):
        return [tool.name for tool in (await session.list_tools()).tools]

    assert session_run(tmp_path, work, "--tools", "grep,glob") == ["glob", "grep"]


def test_served_calls_pass_the_sessions_toolset(isolated_home, tmp_path):
    """The client's calls go through a Session (issue 23): the config's toolset holds for
    an MCP client as for the model, at the moment a call starts."""
    (isolated_home / "config.json").write_text('{"disabled_tools": ["bash"]}')
    marker = tmp_path / "marker"

    async def work(session):
        listed = [tool.name for tool in (await session.list_tools()).tools]
        return listed, await session.call_tool("bash", {"command": f"touch {marker}"})

    listed, called = session_run(tmp_path, work)
    assert "bash" not in listed and "grep" in listed
    assert called.is_error
    assert json.loads(called.content[0].text)["error_code"] == "TOOL_NOT_FOUND"
    assert not marker.exists()


def test_serve_an_unknown_tool_is_a_usage_error(tmp_path):
    import subprocess

    done = subprocess.run([IKIGAI, "mcp", "serve", "--tools", "nope"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stderr.startswith("ikigai: --tools: no servable tool 'nope'")


def test_served_output_schema_comes_from_returns(isolated_home, tmp_path):
    returns = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    write_tool(isolated_home / "tools", "echo-tool", schema={
        "name": "echo", "description": "Echo.", "returns": returns,
        "parameters": {"type": "object", "properties": {}}})

    async def work(session):
        return {t.name: t.output_schema for t in (await session.list_tools()).tools}

    schemas = session_run(tmp_path, work)
    assert schemas["echo"] == returns and schemas["bash"] is None
