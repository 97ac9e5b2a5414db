"""Ask an MCP server over stdio for its tools: ``python mcp_tools_list.py COMMAND...``.

Prints the server's name and version and each tool's name, description and
``inputSchema`` as JSON (what ``mcp_servers.json`` was built from), e.g.
``python mcp_tools_list.py mcp-server-git`` or
``python mcp_tools_list.py npx @modelcontextprotocol/server-everything stdio``.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from typing import Any

TIMEOUT = 30.0


def main(command: list[str]) -> None:
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    assert server.stdin is not None and server.stdout is not None

    def send(message: dict[str, Any]) -> None:
        server.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        server.stdin.flush()

    def answer(request_id: int) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if not select.select([server.stdout], [], [], 1.0)[0]:
                continue
            line = server.stdout.readline()
            if not line:
                break
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("id") == request_id:
                return message["result"]
        raise SystemExit(f"no answer to request {request_id} within {TIMEOUT:g} s")

    try:
        send({"id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "ikigai-corpus", "version": "0"}}})
        info = answer(1).get("serverInfo", {})
        send({"method": "notifications/initialized"})
        send({"id": 2, "method": "tools/list", "params": {}})
        tools = answer(2)["tools"]
    finally:
        server.kill()
        server.wait()
    json.dump({"server": info, "tools": [
        {"name": t["name"], "description": t.get("description", ""),
         "inputSchema": t["inputSchema"]} for t in tools]}, sys.stdout, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
