"""``ikigai mcp serve``: ikigai's registry as an MCP server (stdio, or Streamable HTTP).

Every call runs through the same executor as the model's: validation, the
``ikigai_before_tool_call`` / ``ikigai_after_tool_call`` hooks, the timeout, the output
budget and the envelope. A success is ``structuredContent`` (the tool's result) plus the
same JSON as text; a failure is ``isError: true`` with the envelope as text. Approvals:
the MCP client asks its user before each call; ikigai's policy hooks still run, with
nobody to ask (``ask_user`` is ``None``), so they can deny but cannot prompt.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ikigai_core import Tool
from ikigai_core.app import App
from ikigai_core.errors import UsageError
from ikigai_core.registry import Registry

SERVER_NAME = "ikigai"


def servable(app: App, only: Sequence[str] | None) -> Registry:
    """The tools to serve: the registry without any tool from an MCP server (no loops),
    cut to ``only`` when given (an unknown name is a usage error)."""
    from ikigai_mcp.sessions import close_all

    registry = app.registry()
    close_all()  # servers listed on the way are not served: stop them now
    tools = {name: tool for name, tool in registry.items() if not tool.source.startswith("mcp:")}
    if only is not None:
        unknown = [name for name in only if name not in tools]
        if unknown:
            raise UsageError(f"--tools: no servable tool {unknown[0]!r}; servable: "
                             f"{', '.join(tools) or 'none'}")
        tools = {name: tools[name] for name in only}
    return Registry(tools.values())


def mcp_tool(tool: Tool) -> Any:
    """The MCP description of ``tool``: ``inputSchema`` its parameters, ``outputSchema`` its
    ``returns`` (when that is an object schema)."""
    import mcp_types

    returns = tool.schema.get("returns")
    output = returns if isinstance(returns, dict) and returns.get("type") == "object" else None
    return mcp_types.Tool(name=tool.name, description=tool.description,
                          input_schema=dict(tool.parameters), output_schema=output)


def result_of(envelope: dict[str, Any]) -> Any:
    """The MCP result of one envelope."""
    import mcp_types

    if envelope.get("tool_success"):
        result = envelope.get("result")
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text=json.dumps(result))],
            structured_content=result if isinstance(result, dict) else None)
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=json.dumps(envelope))], is_error=True)


def server(app: App, tools: Registry) -> Any:
    """The low-level MCP server answering ``tools/list`` and ``tools/call`` from ``tools``."""
    import anyio.to_thread
    import mcp_types
    from mcp.server.lowlevel import Server

    from ikigai_core import __version__

    listed = mcp_types.ListToolsResult(tools=[mcp_tool(tool) for tool in tools.values()])

    async def list_tools(ctx: Any, params: Any) -> Any:
        return listed

    async def call_tool(ctx: Any, params: Any) -> Any:
        called = await anyio.to_thread.run_sync(
            lambda: app.executor.call(tools, params.name, params.arguments or {}))
        return result_of(called.envelope)

    return Server(SERVER_NAME, version=__version__, on_list_tools=list_tools,
                  on_call_tool=call_tool)


def run(app: App, tools: Registry, port: int | None) -> None:
    """Serve until the client goes (stdio) or until interrupted (HTTP on 127.0.0.1)."""
    import anyio

    mcp_server = server(app, tools)
    if port is None:
        from mcp.server.stdio import stdio_server

        async def serve_stdio() -> None:
            async with stdio_server() as (read, write):
                await mcp_server.run(read, write, mcp_server.create_initialization_options())

        anyio.run(serve_stdio)
        return
    import uvicorn

    config = uvicorn.Config(mcp_server.streamable_http_app(host="127.0.0.1"), host="127.0.0.1",
                            port=port, log_level="warning")
    uvicorn.Server(config).run()
