"""An MCP server (the SDK's MCPServer) that records what its client does to it.

``recorder.py [LIST_DELAY]``: every message it receives has its method appended to the
file ``$RECORD`` (one line each: ``tools/call``, ``notifications/cancelled``, ...), and its
pid goes to ``$EDGE_PIDS`` first. Once ``grow`` has added a tool, ``tools/list`` answers
``LIST_DELAY`` seconds late (default 0): a slow re-listing after ``tools/list_changed``.
"""

import os
import sys
import time

import anyio
from mcp.server.mcpserver import Context, MCPServer

with open(os.environ["EDGE_PIDS"], "a") as pids:
    pids.write(f"{os.getpid()}\n")
LIST_DELAY = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
grown = False


def record(line: str) -> None:
    with open(os.environ["RECORD"], "a") as out:
        out.write(f"{line}\n")


async def recording(ctx, call_next):
    """Record the method of every message; delay the listing once grown."""
    record(ctx.method)
    if ctx.method == "tools/list" and grown:
        await anyio.sleep(LIST_DELAY)
    return await call_next(ctx)


mcp = MCPServer("recorder", middleware=[recording])


@mcp.tool()
async def wait(seconds: float) -> str:
    """Wait (without blocking the server), then answer."""
    await anyio.sleep(seconds)
    return "waited"


@mcp.tool()
async def freeze(seconds: float) -> str:
    """Block the server's event loop: it answers nothing, not even a ping, for a while."""
    time.sleep(seconds)
    return "thawed"


@mcp.tool()
async def grow(ctx: Context) -> str:
    """Add the tool 'extra', say the tool list changed, then answer."""
    global grown
    mcp.add_tool(lambda: "extra!", name="extra", description="Added while running.")
    grown = True
    await ctx.session.send_tool_list_changed()
    return "grown"


@mcp.tool()
async def vanish(ctx: Context) -> str:
    """Say the tool list changed, then exit before anyone can list it again."""
    await ctx.session.send_tool_list_changed()
    os._exit(3)


mcp.run()
