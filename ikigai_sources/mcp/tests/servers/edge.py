"""An MCP server with one edge case per tool, written with the SDK's MCPServer (FastMCP).

``edge.py [normal|hang|garbage|exit]``; writes its pid to ``$EDGE_PIDS`` (one per line)
first. The file ``$EDGE_MODE`` (when it exists) holds the mode instead: a test breaks a
server whose listing is already cached without changing its configuration.
"""

import os
import sys
import time

if os.environ.get("EDGE_PIDS"):
    with open(os.environ["EDGE_PIDS"], "a") as pids:
        pids.write(f"{os.getpid()}\n")

mode = sys.argv[1] if len(sys.argv) > 1 else "normal"
if os.environ.get("EDGE_MODE") and os.path.exists(os.environ["EDGE_MODE"]):
    with open(os.environ["EDGE_MODE"]) as override:
        mode = override.read().strip()
if mode == "exit":
    sys.exit("edge: told to fail")
if mode == "hang":  # never answers initialize
    time.sleep(600)
if mode == "garbage":
    print("hello, this is not JSON-RPC", flush=True)
    time.sleep(600)

from mcp.server.mcpserver import Context, Image, MCPServer  # noqa: E402
from mcp_types import ToolAnnotations  # noqa: E402

mcp = MCPServer("edge")
count = 0


@mcp.tool()
def incr() -> int:
    """Add one to the counter and return it."""
    global count
    count += 1
    return count


@mcp.tool()
async def grow(ctx: Context) -> str:
    """Add the tool 'extra', then say the tool list changed."""
    mcp.add_tool(lambda: "extra!", name="extra", description="Added while running.")
    await ctx.session.send_tool_list_changed()
    return "grown"


@mcp.tool()
def pic() -> Image:
    """Return a 104-byte PNG."""
    return Image(data=b"\x89PNG" + b"0" * 100, format="png")


@mcp.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("the disk is on fire")


@mcp.tool()
def slow(seconds: float) -> str:
    """Sleep, then answer; ``slow`` goes to ``$EDGE_PIDS.calls`` first (the call is under way)."""
    if os.environ.get("EDGE_PIDS"):
        with open(os.environ["EDGE_PIDS"] + ".calls", "a") as calls:
            calls.write("slow\n")
    time.sleep(seconds)
    return "slept"


@mcp.tool()
def crash() -> str:
    """Exit in the middle of the call."""
    os._exit(3)


@mcp.tool(annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False))
def look(name: str) -> str:
    """A read-only tool that says hello."""
    return f"hello {name}"


@mcp.tool()
def env(name: str) -> str:
    """The server's environment variable ``name`` ('<unset>' when it has none)."""
    return os.environ.get(name, "<unset>")


@mcp.tool()
def write(path: str) -> str:
    """Write a file; 'written', or why not."""
    try:
        with open(path, "w") as out:
            out.write("x")
    except OSError as exc:
        return exc.strerror
    return "written"


mcp.run()
