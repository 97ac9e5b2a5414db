"""``ikigai mcp serve``: ikigai's registry as an MCP server (stdio, or Streamable HTTP).

Every call runs through a :class:`~ikigai_core.Session` without a model
(:meth:`~ikigai_core.Session.serving`), the same boundary as the model's calls: only the
tools the session offers run (``--tools``, else the config's toolset), and each goes
through validation, the ``ikigai_before_tool_call`` / ``ikigai_after_tool_call`` hooks, the
timeout, the output budget and the envelope. A success is ``structuredContent`` (the
tool's result) plus the same JSON as text; a failure is ``isError: true`` with the envelope
as text. Approvals: the MCP client asks its user before each call; ikigai's policy hooks
still run, with nobody to ask (the session has no asker), so they can deny but cannot
prompt.
"""

from __future__ import annotations

import json
from typing import Any

from ikigai_core import Session, Tool
from ikigai_core.app import App
from ikigai_core.errors import UsageError
from ikigai_core.registry import Registry
from ikigai_core.toolset import parse_names

SERVER_NAME = "ikigai"


def servable(app: App, only: str | None) -> Session:
    """The session serving the registry without any tool from an MCP server (no loops),
    the toolset chosen by ``only`` (``"a,b"``: an unknown name is a usage error) or by
    the config."""
    from ikigai_mcp.sessions import close_all

    registry = app.registry()
    close_all()  # servers listed on the way are not served: stop them now
    tools = {name: tool for name, tool in registry.items() if not tool.source.startswith("mcp:")}
    unknown = sorted(parse_names(only or "") - set(tools))
    if unknown:
        raise UsageError(f"--tools: no servable tool {unknown[0]!r}; servable: "
                         f"{', '.join(tools) or 'none'}")
    return Session.serving(app, Registry(tools.values()), tools=only or None)


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


def server(session: Session) -> Any:
    """The low-level MCP server answering ``tools/list`` and ``tools/call`` through
    ``session``."""
    import anyio.to_thread
    import mcp_types
    from mcp.server.lowlevel import Server

    from ikigai_core import __version__

    async def list_tools(ctx: Any, params: Any) -> Any:
        return mcp_types.ListToolsResult(
            tools=[mcp_tool(tool) for tool in session.offered().values()])

    async def call_tool(ctx: Any, params: Any) -> Any:
        called = await anyio.to_thread.run_sync(
            lambda: session.call(params.name, params.arguments or {}))
        return result_of(called.envelope)

    return Server(SERVER_NAME, version=__version__, on_list_tools=list_tools,
                  on_call_tool=call_tool)


def run(session: Session, port: int | None) -> None:
    """Serve until the client goes (stdio) or until interrupted (HTTP on 127.0.0.1)."""
    import anyio

    mcp_server = server(session)
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
