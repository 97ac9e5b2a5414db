"""A Streamable HTTP MCP server written with the SDK's MCPServer (FastMCP), on 127.0.0.1.

It binds a free port, prints its URL on one line, then serves until it is stopped.
``header(name)`` answers the HTTP header ``name`` of the request that carried the call;
``incr()`` counts, so a test sees the session kept across calls.
"""

import socket

import uvicorn
from mcp.server.mcpserver import Context, MCPServer

mcp = MCPServer("web")
count = 0


@mcp.tool()
def header(name: str, ctx: Context) -> str:
    """The value of the HTTP header ``name`` in this call's request ('' when absent)."""
    return ctx.request_context.request.headers.get(name, "")


@mcp.tool()
def incr() -> int:
    """Add one to the counter and return it."""
    global count
    count += 1
    return count


sock = socket.socket()
sock.bind(("127.0.0.1", 0))
print(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
config = uvicorn.Config(mcp.streamable_http_app(), log_level="warning")
uvicorn.Server(config).run(sockets=[sock])
