"""mcp.json files, ``ikigai mcp add|list|remove``, trust, and a full ``ask`` loop through
mcp-server-time (from PyPI) with the fake provider server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from ikigai_mcp.config import load
from ikigai_mcp.servers import configured

from ikigai_core.trust import TrustStore
from tests.support.replies import REPLIES

from .conftest import edge

IKIGAI = str(Path(sys.executable).with_name("ikigai"))


def ikigai(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([IKIGAI, *args], capture_output=True, text=True, cwd=cwd, timeout=90,
                          env=env, stdin=subprocess.DEVNULL)


def test_claude_desktop_format_with_variables(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "server", "${ROOT}/data"],
                  "env": {"TOKEN": "${TOKEN}"}, "cwd": "/tmp"},
        "web": {"url": "https://example.test/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"},
                "startupTimeout": 3},
        "broken": {"command": "x", "url": "y"},
        "unset": {"command": "x", "args": ["${NOT_SET}"]},
    }}))
    files, web, broken, unset = load(path, "user", {"ROOT": "/srv", "TOKEN": "t0k"})
    assert files.command == ("npx", "-y", "server", "/srv/data") and files.env == {"TOKEN": "t0k"}
    assert files.transport == "stdio" and files.cwd == "/tmp"
    assert web.url == "https://example.test/mcp" and web.headers["Authorization"] == "Bearer t0k"
    assert web.startup_timeout == 3 and web.transport == "http"
    assert "exactly one of" in str(broken) and broken.server == "broken"
    assert "${NOT_SET}" in str(unset) and "not set" in str(unset)


def test_a_broken_entry_is_skipped_and_the_rest_still_load(isolated_home, tmp_path):
    (isolated_home / "mcp.json").write_text(json.dumps({"mcpServers": {
        "bad name!": {"command": "x"}, "ok": {"command": "x"}}}))
    servers = configured(isolated_home, tmp_path)
    assert list(servers.configs) == ["ok"]
    [skipped] = servers.skipped
    assert "server name" in skipped.reason


def test_a_file_that_is_not_json_is_one_reason(isolated_home, tmp_path):
    (isolated_home / "mcp.json").write_text("{nope")
    ran = ikigai(tmp_path, "tool", "list")
    assert ran.returncode == 0 and "bash" in ran.stdout
    assert "mcp.json is not valid JSON" in ran.stderr and "Traceback" not in ran.stderr


def test_project_servers_only_once_trusted_and_they_win(servers, isolated_home, tmp_path):
    servers({"edge": {"command": "no-such-user-server"}})
    project = tmp_path / ".ikigai"
    project.mkdir()
    (project / "mcp.json").write_text(json.dumps({"mcpServers": {"edge": edge()}}))
    untrusted = configured(isolated_home, tmp_path)
    assert untrusted.configs["edge"].scope == "user"
    assert [s.kind for s in untrusted.skipped] == ["untrusted"]
    TrustStore(isolated_home).trust(tmp_path)
    trusted = configured(isolated_home, tmp_path)
    assert trusted.configs["edge"].scope == "project" and not trusted.skipped


def test_add_list_remove(servers, isolated_home, tmp_path):
    servers({})
    added = ikigai(tmp_path, "mcp", "add", "edge", "--env", "A=1", "--", sys.executable, edge()["args"][0], "normal")
    assert added.returncode == 0, added.stderr
    assert "Added MCP server 'edge'" in added.stdout
    entry = json.loads((isolated_home / "mcp.json").read_text())["mcpServers"]["edge"]
    assert entry["command"] == sys.executable and entry["env"] == {"A": "1"}
    web = ikigai(tmp_path, "mcp", "add", "web", "--url", "http://127.0.0.1:9/mcp",
                 "--header", "X-Key=${KEY}", "--startup-timeout", "1")
    assert web.returncode == 0, web.stderr
    listed = ikigai(tmp_path, "mcp", "list", "--json", env={**__import__("os").environ,
                                                             "KEY": "k"})
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["edge"]["state"] == "ok" and rows["edge"]["tools"] == 9
    assert rows["web"]["state"] == "failed" and rows["web"]["error"]
    assert ikigai(tmp_path, "mcp", "remove", "web").returncode == 0
    gone = ikigai(tmp_path, "mcp", "remove", "web")
    assert gone.returncode == 2 and "no MCP server 'web'" in gone.stderr
    assert list(json.loads((isolated_home / "mcp.json").read_text())["mcpServers"]) == ["edge"]


@pytest.mark.parametrize("args, message", [
    (["x"], "give the server's command after --"),
    (["x", "--url", "http://h", "--", "cmd"], "not both"),
    (["bad name", "--", "cmd"], "server name"),
    (["x", "--header", "novalue", "--url", "http://h"], "KEY=VALUE"),
])
def test_add_refuses_bad_input_in_one_line(tmp_path, isolated_home, args, message):
    ran = ikigai(tmp_path, "mcp", "add", *args)
    assert ran.returncode != 0 and message in ran.stderr
    assert len(ran.stderr.splitlines()) == 1 and not (isolated_home / "mcp.json").exists()


def test_ask_loop_through_mcp_server_time(servers, fake_server, monkeypatch, tmp_path):
    servers({"time": {"command": "mcp-server-time"}})
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_server.url)
    replies = REPLIES["anthropic"]
    fake_server.push(
        replies.reply(calls=[("toolu_1", "time__get_current_time", {"timezone": "Etc/UTC"})],
                      stream=True),
        replies.reply("It is late.", stream=True))
    ran = ikigai(tmp_path, "ask", "--yes", "--provider", "anthropic", "what time is it?")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "It is late.\n"
    advertised = [tool["name"] for tool in fake_server.requests[0].json["tools"]]
    assert "time__convert_time" in advertised
    [block] = fake_server.requests[1].json["messages"][-1]["content"]
    envelope = json.loads(block["content"])
    assert envelope["tool_success"] is True and envelope["result"]["timezone"] == "Etc/UTC"
    assert "is_error" not in block
