"""``ikigai mcp add|list|remove|serve``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ikigai_core.app import App
from ikigai_core.commands.output import echo_json, printable
from ikigai_core.errors import UsageError
from ikigai_mcp import DEFAULT_STARTUP_TIMEOUT, project_config, user_config

pass_app = click.make_pass_decorator(App)


def _pairs(values: tuple[str, ...], what: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key:
            raise UsageError(f"{what} {value!r} must look like KEY=VALUE")
        pairs[key] = val
    return pairs


class _AnyVariable(dict):  # type: ignore[type-arg]
    """An environment where every ``${VAR}`` is set: ``add`` checks the rest, expands nothing."""

    def __contains__(self, key: object) -> bool:
        return True

    def __missing__(self, key: str) -> str:
        return key


def _config_file(app: App, project: bool) -> Path:
    """The user's ``mcp.json``, or the project's (the current directory when in no project)."""
    return project_config(app.project or app.cwd) if project else user_config(app.home)


@click.group("mcp")
def mcp_group() -> None:
    """Use MCP servers' tools (add, list, remove), or serve ikigai's tools over MCP."""


@mcp_group.command("add", context_settings={"ignore_unknown_options": True})
@click.argument("name")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--url", help="A Streamable HTTP server's URL (instead of -- CMD ARGS...).")
@click.option("--header", "headers", multiple=True, metavar="K=V", help="HTTP header (repeat).")
@click.option("--env", "env", multiple=True, metavar="K=V",
              help="Environment variable for a stdio server (repeat); ${VAR} expands later.")
@click.option("--startup-timeout", type=click.FloatRange(min=0, min_open=True), metavar="S",
              help=f"Seconds to start and list tools (default {DEFAULT_STARTUP_TIMEOUT:g}).")
@click.option("--project", is_flag=True, help="Write ./.ikigai/mcp.json instead of the user's.")
@pass_app
def add(app: App, name: str, command: tuple[str, ...], url: str | None,
        headers: tuple[str, ...], env: tuple[str, ...], startup_timeout: float | None,
        project: bool) -> None:
    """Add server NAME: `ikigai mcp add NAME -- CMD ARGS...` or `--url URL [--header K=V]`."""
    if bool(command) == bool(url):
        raise UsageError("give the server's command after -- (ikigai mcp add NAME -- CMD ARGS) "
                         "or its --url, not both")
    if url and env:
        raise UsageError("--env is for stdio servers; an HTTP server takes --header")
    if command and headers:
        raise UsageError("--header is for HTTP servers; a stdio server takes --env")
    entry: dict[str, Any] = ({"url": url, "headers": _pairs(headers, "--header")} if url else
                             {"command": command[0], "args": list(command[1:]),
                              "env": _pairs(env, "--env")})
    entry = {k: v for k, v in entry.items() if v or k in ("url", "command", "args")}
    if startup_timeout is not None:
        entry["startupTimeout"] = startup_timeout
    from ikigai_mcp.config import parse, read_raw, write_raw  # not on `ikigai --help`'s path

    path = _config_file(app, project)
    parse(name, entry, "", _AnyVariable(), path)  # a bad entry fails before anything is written
    servers = read_raw(path)
    replaced = name in servers
    servers[name] = entry
    write_raw(path, servers)
    click.echo(printable(f"{'Replaced' if replaced else 'Added'} MCP server '{name}' in {path}; "
                         f"its tools are {name}__TOOL"))


@mcp_group.command("remove")
@click.argument("name")
@click.option("--project", is_flag=True, help="Edit ./.ikigai/mcp.json instead of the user's.")
@pass_app
def remove(app: App, name: str, project: bool) -> None:
    """Remove server NAME."""
    from ikigai_mcp.config import read_raw, write_raw

    path = _config_file(app, project)
    servers = read_raw(path)
    if name not in servers:
        known = ", ".join(servers) or "none"
        raise UsageError(f"no MCP server '{name}' in {path} (configured there: {known})")
    del servers[name]
    write_raw(path, servers)
    click.echo(printable(f"Removed MCP server '{name}' from {path}"))


@mcp_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array on stdout.")
@pass_app
def list_servers(app: App, as_json: bool) -> None:
    """Every configured server: state, usable tools, last error (servers never listed start
    now)."""
    from collections import Counter

    from ikigai_mcp.listing import ListingCache
    from ikigai_mcp.servers import configured
    from ikigai_mcp.source import McpSource

    servers = configured(app.home, app.cwd, app.environ)
    usable = Counter(tool.source for tool in app.registry().values())  # lists what must be
    cache = ListingCache(app.home)
    sources = [McpSource(config, app.home, cache, prepare=app.prepare_process,
                         notices=app.notices) for config in servers.configs.values()]
    rows = []
    for source in sources:
        config, listing = source.config, source.listing()
        rows.append({"name": config.name, "scope": config.scope, "transport": config.transport,
                     "target": config.where, "state": "failed" if "error" in listing else "ok",
                     "tools": usable[source.name], "error": listing.get("error")})
    for skipped in servers.skipped:
        rows.append({"name": skipped.name, "scope": "user" if skipped.path == user_config(
                     app.home) else "project", "transport": None, "target": str(skipped.path),
                     "state": "untrusted" if skipped.kind == "untrusted" else "invalid",
                     "tools": 0, "error": skipped.reason})
    if as_json:
        echo_json(rows)
        return
    if not rows:
        click.echo("No MCP servers configured; add one with `ikigai mcp add NAME -- CMD ARGS`")
    for row in rows:
        line = (f"{row['name']}  {row['scope']}  {row['state']}  {row['tools']} tools  "
                f"{row['target']}")
        if row["error"]:
            line += f"\n  {row['error']}"
        click.echo(printable(line))


@mcp_group.command("serve")
@click.option("--http", "port", type=click.IntRange(0, 65535), metavar="PORT",
              help="Serve Streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio.")
@click.option("--tools", "only", metavar="A,B", help="Serve only these tools.")
@pass_app
def serve(app: App, port: int | None, only: str | None) -> None:
    """Serve ikigai's tools to an MCP client (tools from MCP servers are never re-served)."""
    from ikigai_mcp.serve import run, servable

    run(servable(app, only), port)

