"""ikigai-mcp: MCP servers as an ikigai tool source, and ikigai's tools as an MCP server.

Built only on ikigai_core's plugin API and the official ``mcp`` SDK, which is imported
only on paths that talk to a server (a warm ``ikigai tool list`` never does).
"""
