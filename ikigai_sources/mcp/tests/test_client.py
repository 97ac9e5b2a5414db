"""MCP servers as a tool source, against real servers: the edge-case MCPServer in
servers/edge.py and mcp-server-time from PyPI, through the real executor and CLI."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ikigai_mcp import plugin, sessions
from ikigai_mcp.source import tool_name

from ikigai_core.app import App
from tests.support.imports import heavy_imports
from tests.support.procs import wait_gone

from .conftest import edge, pids

IKIGAI = str(Path(sys.executable).with_name("ikigai"))


def app(tmp_path, **environ) -> App:
    return App(environ={**os.environ, **environ}, cwd=tmp_path)


def call(an_app: App, name: str, arguments: dict | None = None) -> dict:
    return an_app.executor.call(an_app.registry(), name, arguments or {}).envelope


def test_tools_join_the_registry_as_server__tool_with_schema_and_annotations(servers, tmp_path):
    servers({"edge": edge()})
    registry = app(tmp_path).registry()
    tool = registry["edge__look"]
    assert tool.source == "mcp:edge"
    assert tool.parameters["required"] == ["name"]
    assert tool.schema["annotations"] == {"readOnlyHint": True, "destructiveHint": False}
    assert tool.schema["returns"]["properties"]["result"]["type"] == "string"
    assert {"edge__incr", "edge__crash", "bash"} <= set(registry)


def test_a_stateful_server_keeps_its_state_across_calls(servers, tmp_path):
    servers({"edge": edge()})
    an_app = app(tmp_path)
    assert [call(an_app, "edge__incr")["result"] for _ in range(3)] == [
        {"result": 1}, {"result": 2}, {"result": 3}]


def test_results_text_structured_error_and_image(servers, tmp_path):
    servers({"edge": edge()})
    an_app = app(tmp_path)
    assert call(an_app, "edge__look", {"name": "ann"}) == {
        "tool_success": True, "result": {"result": "hello ann"}}
    failed = call(an_app, "edge__fail")
    assert failed["tool_success"] is False and failed["error_code"] == "TOOL_ERROR"
    assert "edge__fail" in failed["error"]
    picture = call(an_app, "edge__pic")
    text = picture["result"]["text"]
    assert text == "[image/png image, 104 bytes]"
    assert base64.b64encode(b"\x89PNG").decode()[:6] not in json.dumps(picture)


def test_arguments_are_validated_before_the_server_sees_them(servers, tmp_path):
    servers({"edge": edge()})
    envelope = call(app(tmp_path), "edge__look", {"name": 3})
    assert envelope["error_code"] == "INVALID_PARAMS"


def test_timeout_cancels_and_the_next_call_works(servers, tmp_path):
    pidfile = servers({"edge": edge()})
    an_app = app(tmp_path, IKIGAI_TOOL_TIMEOUT="1")
    started = time.monotonic()
    envelope = call(an_app, "edge__slow", {"seconds": 60})
    assert envelope["error_code"] == "TOOL_TIMEOUT"
    # the 1 s timeout, not the 60 s call: ~1.5 s quiet, a wide margin for a loaded machine
    assert time.monotonic() - started < 15
    assert call(an_app, "edge__look", {"name": "again"})["tool_success"] is True
    assert len(pids(pidfile)) <= 2


def test_a_server_crashing_mid_call_restarts_on_the_next_call(servers, tmp_path):
    pidfile = servers({"edge": edge()})
    an_app = app(tmp_path)
    assert call(an_app, "edge__incr")["result"] == {"result": 1}
    crashed = call(an_app, "edge__crash")
    assert crashed["error_code"] == "TOOL_CRASHED"
    assert "closed the connection" in crashed["error"]
    assert call(an_app, "edge__incr")["result"] == {"result": 1}  # a fresh server
    first, *_, last = pids(pidfile)
    assert first != last and wait_gone(first)


def test_list_changed_updates_the_registry_before_the_next_turn(servers, tmp_path):
    servers({"edge": edge()})
    an_app = app(tmp_path)
    assert "edge__extra" not in an_app.registry()
    assert call(an_app, "edge__grow")["result"] == {"result": "grown"}
    deadline = time.monotonic() + 10
    while not plugin.ikigai_tools_changed():
        assert time.monotonic() < deadline, "no tools/list_changed arrived"
        time.sleep(0.05)
    assert call(an_app, "edge__extra")["result"] == {"text": "extra!"}


@pytest.mark.parametrize("mode, reason", [
    ("hang", "did not finish starting within 1 s"),
    ("garbage", "not MCP"),
])
def test_a_broken_server_is_skipped_with_a_reason_and_nothing_hangs(servers, tmp_path, mode,
                                                                    reason):
    servers({"edge": edge(), "bad": edge(mode, startupTimeout=1)})
    started = time.monotonic()
    registry = app(tmp_path).registry()
    assert time.monotonic() - started < 8
    assert "edge__incr" in registry
    [skipped] = [s for s in registry.skipped if s.source == "mcp:bad"]
    assert reason in skipped.reason


def test_a_missing_command_is_skipped_with_a_reason(servers, tmp_path):
    servers({"gone": {"command": "no-such-mcp-server-anywhere"}})
    [skipped] = [s for s in app(tmp_path).registry().skipped if s.source == "mcp:gone"]
    assert "command not found" in skipped.reason


def test_warm_tool_list_starts_no_server_and_imports_no_sdk(servers, tmp_path):
    pidfile = servers({name: edge() for name in ("one", "two", "three")})
    first = subprocess.run([IKIGAI, "tool", "list"], capture_output=True, text=True,
                           cwd=tmp_path, timeout=60)
    assert "one__incr" in first.stdout and "three__look" in first.stdout
    started = len(pids(pidfile))
    assert started == 3
    assert heavy_imports(["tool", "list"], env=os.environ, cwd=str(tmp_path)) == []
    assert len(pids(pidfile)) == started
    refreshed = subprocess.run([IKIGAI, "refresh"], capture_output=True, text=True,
                               cwd=tmp_path, timeout=60)
    assert "Tools refreshed." in refreshed.stdout
    assert len(pids(pidfile)) == started + 3
    assert all(wait_gone(pid) for pid in pids(pidfile))


def test_a_broken_listing_cache_lists_every_server_again(servers, isolated_home, tmp_path):
    pidfile = servers({"one": edge(), "two": edge(cwd=str(tmp_path))})  # two cache keys
    cache = isolated_home / "cache" / "mcp-tools.json"
    for broken in (b"\xff", b'{"version": 0, "servers": {}}'):
        cache.parent.mkdir(exist_ok=True)
        cache.write_bytes(broken)
        started = len(pids(pidfile))
        assert {"one__incr", "two__incr"} <= set(app(tmp_path).registry())
        assert len(pids(pidfile)) == started + 2
        assert len(json.loads(cache.read_text())["servers"]) == 2
        sessions.close_all()
        assert {"one__incr", "two__incr"} <= set(app(tmp_path).registry())  # from the cache
        assert len(pids(pidfile)) == started + 2


def test_tool_names_fit_the_provider_rule():
    assert tool_name("srv", "do.thing/now") == "srv__do_thing_now"
    long = tool_name("server", "x" * 100)
    assert len(long) == 64 and long.startswith("server__xxx")
    assert long != tool_name("server", "x" * 99)
