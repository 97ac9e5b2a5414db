"""An MCP server (the SDK's MCPServer) whose tools have the names it is given:
``named.py TOOL...``; each answers its own name."""

import sys

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("named")
for tool in sys.argv[1:]:
    mcp.add_tool(lambda tool=tool: tool, name=tool, description=f"Answers {tool!r}.")
mcp.run()
