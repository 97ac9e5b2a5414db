"""Two MCP servers whose tools fit to one ikigai name (issue 22): ``a__b`` + tool ``c`` and
``a`` + tool ``b__c`` are both ``a__b__c``. Plain ``tool list`` and ``ask`` say so in one
line, and ``mcp list`` counts only the tools that are usable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.replies import REPLIES

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
NAMED = str(Path(__file__).with_name("servers") / "named.py")


def ikigai(cwd: Path, *args: str, env: dict[str, str] | None = None,
           ) -> subprocess.CompletedProcess[str]:
    ran = subprocess.run([IKIGAI, *args], capture_output=True, text=True, cwd=cwd, timeout=90,
                         env=env, stdin=subprocess.DEVNULL)
    assert "Traceback" not in ran.stderr
    return ran


def named(*tools: str) -> dict:
    """The ``mcp.json`` entry of a server whose tools are ``tools``."""
    return {"command": sys.executable, "args": [NAMED, *tools]}


def clash_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "same ikigai name" in line]


def test_a_clash_between_two_servers_is_one_line_and_mcp_list_counts_what_is_usable(
        isolated_home, tmp_path, fake_server):
    (isolated_home / "mcp.json").write_text(json.dumps({"mcpServers": {
        "a__b": named("c", "d"), "a": named("b__c", "e")}}))
    listed = ikigai(tmp_path, "tool", "list")
    assert listed.returncode == 0, listed.stderr
    [line] = clash_lines(listed.stderr)
    assert "'b__c' of MCP server 'a'" in line and "'c' of MCP server 'a__b'" in line
    assert "a__b__c" in line and "rename" in line
    assert {"a__b__c", "a__b__d", "a__e"} <= {row.split()[0] for row in listed.stdout.splitlines()}
    rows = {row["name"]: row for row in json.loads(
        ikigai(tmp_path, "mcp", "list", "--json").stdout)}
    assert (rows["a__b"]["tools"], rows["a"]["tools"]) == (2, 1)
    ran = ikigai(tmp_path, "tool", "run", "a__b__c", "{}")
    assert json.loads(ran.stdout)["result"] == {"text": "c"}  # the first server's keeps it
    fake_server.push(REPLIES["openai"].reply("Done.", stream=True))
    asked = ikigai(tmp_path, "ask", "--provider", "openai", "hi",
                   env={**os.environ, "OPENAI_API_KEY": "sk-test",
                        "OPENAI_BASE_URL": fake_server.url})
    assert asked.returncode == 0, asked.stderr
    assert len(clash_lines(asked.stderr)) == 1


def test_a_project_server_keeps_a_name_it_shares_with_a_user_server(isolated_home, tmp_path):
    (isolated_home / "mcp.json").write_text(json.dumps({"mcpServers": {
        "a__b": named("c", "d")}}))
    (tmp_path / ".ikigai").mkdir()
    (tmp_path / ".ikigai" / "mcp.json").write_text(json.dumps({"mcpServers": {
        "a": named("b__c")}}))
    assert ikigai(tmp_path, "trust").returncode == 0
    [line] = clash_lines(ikigai(tmp_path, "tool", "list").stderr)
    assert "'c' of MCP server 'a__b'" in line and "'b__c' of MCP server 'a', which keeps" in line
    rows = {row["name"]: row for row in json.loads(
        ikigai(tmp_path, "mcp", "list", "--json").stdout)}
    assert (rows["a__b"]["tools"], rows["a"]["tools"]) == (1, 1)
    ran = ikigai(tmp_path, "tool", "run", "a__b__c", "{}")
    assert json.loads(ran.stdout)["result"] == {"text": "b__c"}
