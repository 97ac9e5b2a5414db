"""``ikigai tool list|show|run`` and ``ikigai refresh``."""

from __future__ import annotations

import os
import sys
from collections import Counter
from typing import TYPE_CHECKING, Any

import click

from ikigai_core.app import App
from ikigai_core.commands.authoring import new_tool, test_tool
from ikigai_core.commands.output import dumps, echo_json, printable, warn
from ikigai_core.errors import IkigaiError, UsageError
from ikigai_core.registry import Registry
from ikigai_core.skills import SkillIndex
from ikigai_core.tools import SkippedTool, Tool

if TYPE_CHECKING:
    from ikigai_core.agent_definitions import AgentIndex

pass_app = click.make_pass_decorator(App)


def report_skipped(registry: Registry | SkillIndex | AgentIndex, *, verbose: bool,
                   what: str = "tool") -> None:
    """On stderr: each broken tool (or skill, agent) and why; untrusted project ones in one
    line."""
    for skipped in registry.skipped:
        if skipped.kind == "invalid" or (verbose and skipped.kind == "ignored"):
            where = f" ({skipped.path})" if skipped.path else ""
            warn(f"skipped {skipped.source} {what} '{skipped.name}'{where}: {skipped.reason}")
    untrusted = Counter(s.reason for s in registry.skipped if s.kind == "untrusted")
    for reason, count in untrusted.items():
        warn(f"{count} project {what}{'' if count == 1 else 's'} not loaded: {reason}")


def _skipped_label(skipped: SkippedTool) -> str:
    """``project bash-tool ignored (untrusted)``, ``user bad-tool broken``: the file, so an
    untrusted project ``bash-tool`` does not read as if the built-in bash were gone."""
    what = skipped.path.name if skipped.path else f"tool '{skipped.name}'"
    state = "ignored (untrusted)" if skipped.kind == "untrusted" else "broken"
    return f"{skipped.source} {what} {state}"


def project_state(app: App) -> str:
    """The project in use and whether it is trusted, or that there is none."""
    from ikigai_core.trust import TrustStore

    if app.project is None:
        return ("none (no .ikigai/ nor AGENTS.md in this directory or above it, below the home "
                "directory)")
    trusted = TrustStore(app.home).is_trusted(app.project)
    state = "trusted" if trusted else "not trusted: its tools and AGENTS.md are not loaded"
    return f"{app.project} ({state})"


def summary(description: str) -> str:
    """A description's first line, for one-row-per-tool listings."""
    return next(iter(description.strip().splitlines()), "")


def _tool_json(tool: Tool) -> dict[str, Any]:
    return {"name": tool.name, "path": tool.location, "source": tool.source,
            "description": tool.description}


@click.group("tool")
def tool_group() -> None:
    """List, inspect and run the discovered tools."""


tool_group.add_command(new_tool)
tool_group.add_command(test_tool)


@tool_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array on stdout.")
@click.option("-v", "--verbose", is_flag=True, help="Show paths, overridden and ignored files.")
@pass_app
def list_tools(app: App, as_json: bool, verbose: bool) -> None:
    """List every discovered tool; skipped tools and why go to stderr."""
    registry = app.registry()
    report_skipped(registry, verbose=verbose)
    if as_json:
        echo_json([_tool_json(tool) for tool in registry.values()])
        return
    if verbose:
        click.echo(printable(f"Project: {project_state(app)}"))
    if not registry:
        warn("no tools found")
    width = max((len(name) for name in registry), default=0)
    sources = max([8, *(len(tool.source) for tool in registry.values())])
    lines = []
    for tool in registry.values():
        lines.append(f"{tool.name:<{width}}  {tool.source:<{sources}}  {summary(tool.description)}")
        if verbose:
            lines.append(f"{'':<{width}}  {tool.location}")
    if lines:
        click.echo(printable("\n".join(lines)))  # one write: click flushes every echo


@tool_group.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")
@pass_app
def show_tool(app: App, name: str, as_json: bool) -> None:
    """Show one tool's schema, source and path."""
    registry = app.registry()
    tool = registry.get(name)
    if tool is None:
        raise IkigaiError(registry.why_missing(name) or
                          f"unknown tool '{name}'; see `ikigai tool list`")
    if as_json:
        echo_json({**_tool_json(tool), "schema": tool.schema})
        return
    echo_tool(tool)


def echo_tool(tool: Tool) -> None:
    """Print one tool for people: name, source, path and schema (``tool show``, ``/tool NAME``)."""
    click.echo(printable(f"Tool: {tool.name}\nSource: {tool.source}\nPath: {tool.location}"))
    click.echo("Schema:")
    click.echo(printable(dumps(tool.schema, indent=2)))


@tool_group.command("run")
@click.argument("name")
@click.argument("args_json", required=False)
@pass_app
def run_tool(app: App, name: str, args_json: str | None) -> None:
    """Run tool NAME with ARGS_JSON (a JSON object; read from stdin when omitted).

    Prints the envelope the model would receive; exits 0 when tool_success is true, 1 otherwise.
    """
    if args_json is None and sys.stdin.isatty():
        warn("reading the arguments as JSON from the terminal; end with Ctrl-D")
    data = sys.stdin.buffer.read() if args_json is None else os.fsencode(args_json)
    if not data.strip():
        raise UsageError(f"no arguments for tool '{name}': pass a JSON object, as "
                         f"`ikigai tool run {name} '{{...}}'` or on stdin "
                         f"(`ikigai tool show {name}` lists its parameters)")
    from ikigai_core.strictjson import loads  # lazy: `tool list` parses no JSON

    registry = app.registry()
    try:
        arguments: Any = loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        called = app.executor.call(registry, name, None,
                                   unparsed=f"not valid UTF-8 (byte {exc.start})")
    except ValueError as exc:
        called = app.executor.call(registry, name, None, unparsed=f"not valid JSON ({exc})")
    else:
        called = app.executor.call(registry, name, arguments)
        missing = None if name in registry else registry.why_missing(name)
        if missing:
            warn(missing)
    click.echo(dumps(called.envelope, indent=2))
    sys.exit(0 if called.outcome.success else 1)


@tool_group.command("check")
@click.argument("name")
@click.option("--provider", "provider_name", metavar="NAME",
              help="Check for this provider only (default: every installed one).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")
@pass_app
def check_tool(app: App, name: str, provider_name: str | None, as_json: bool) -> None:
    """Show how tool NAME goes to each provider: as is, rewritten (what changed) or excluded
    (why). Exits 0 when every provider checked accepts it, 1 otherwise."""
    from ikigai_core.providers import collect_providers, get_provider

    registry = app.registry()
    tool = registry.get(name)
    if tool is None:
        raise IkigaiError(registry.why_missing(name) or
                          f"unknown tool '{name}'; see `ikigai tool list`")
    providers = ([get_provider(app.pm, provider_name, app.notices)] if provider_name
                 else list(collect_providers(app.pm, app.notices).values()))
    fits = {provider.name: provider.fit_tool(tool) for provider in providers}
    if as_json:
        echo_json({**_tool_json(tool), "providers": {
            provider: {"status": fit.status, "changes": list(fit.changes), "reason": fit.reason,
                       "declaration": fit.declaration} for provider, fit in fits.items()}})
    else:
        size = len(dumps(tool.schema).encode())
        click.echo(printable(f"{tool.name} ({tool.source}, {tool.location}): --schema answer "
                             f"valid, {size} of {app.settings.schema_max_bytes} bytes"))
        width = max((len(provider) for provider in fits), default=0)
        for provider, fit in fits.items():
            detail = f": {fit.reason}" if fit.reason else ""
            click.echo(printable(f"{provider:<{width}}  {fit.status}{detail}"))
            for change in fit.changes:
                click.echo(printable(f"{'':<{width}}    {change}"))
    sys.exit(0 if all(fit.declaration is not None for fit in fits.values()) else 1)


@click.command("refresh")
@pass_app
def refresh(app: App) -> None:
    """Ask every tool for its schema again and say what changed."""
    refresh_tools(app)


def refresh_tools(app: App) -> Registry:
    """Rediscover every tool, print what changed, return the new registry (``/refresh`` too)."""
    from ikigai_core.snapshot import Snapshot, changes_since

    before = Snapshot(app.home).load()
    registry = app.registry(refresh=True)  # recorded as the registry to compare with next
    changes = changes_since(before, registry)
    click.echo(f"Tools refreshed. {len(registry)} tools available.")
    for label, names in (("Added", changes.added), ("Removed", changes.removed),
                         ("Changed", changes.changed)):
        if names:
            click.echo(f"{label}: {', '.join(names)}")
    skipped = sorted({_skipped_label(s) for s in registry.skipped if s.kind != "ignored"})
    if skipped:
        click.echo(printable(f"Skipped: {', '.join(skipped)}"))
    report_skipped(registry, verbose=False)
    return registry

