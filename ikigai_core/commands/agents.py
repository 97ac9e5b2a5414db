"""``ikigai agents list|show``: the agent definitions a conversation may fork by name."""

from __future__ import annotations

import click

from ikigai_core.app import App
from ikigai_core.commands.output import echo_json, printable, warn
from ikigai_core.commands.tools import pass_app, report_skipped
from ikigai_core.errors import IkigaiError


@click.group("agents")
def agents_group() -> None:
    """List and show the agent definitions sub-agents are forked from."""


@agents_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array on stdout.")
@click.option("-v", "--verbose", is_flag=True, help="Also show overridden definitions.")
@pass_app
def list_agents(app: App, as_json: bool, verbose: bool) -> None:
    """List every agent definition; skipped ones and why go to stderr."""
    agents = app.agents
    report_skipped(agents, verbose=verbose, what="agent")
    if as_json:
        echo_json([agent.to_json() for agent in agents.values()])
        return
    if not agents:
        warn(f"no agent definitions found; put NAME.md files in {app.home / 'agents'}")
    width = max((len(name) for name in agents), default=0)
    for agent in agents.values():
        click.echo(printable(f"{agent.name:<{width}}  {agent.source:<7}  {agent.description}"))


@agents_group.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object on stdout.")
@pass_app
def show_agent(app: App, name: str, as_json: bool) -> None:
    """Show one definition: where it is, its tools, model, limits and system prompt."""
    agent = app.agents.get(name)
    if agent is None:
        raise IkigaiError(app.agents.why_not(name))
    if as_json:
        echo_json(agent.to_json())
        return
    budget = ", ".join(f"{kind} {value:g}" for kind, value in agent.to_json()["budget"].items())
    tools = "the parent's" if agent.tools is None else ", ".join(agent.tools) or "none"
    lines = (f"Agent: {agent.name}", f"Source: {agent.source}", f"Path: {agent.path}",
             f"Description: {agent.description}", f"Tools: {tools}",
             "Model: " + (agent.model or "the parent's"),
             "Max turns: " + (str(agent.max_turns or "") or "the max_turns setting's"),
             "Budget: " + (budget or "the fork's, else the agents_budget_* settings"))
    click.echo(printable("\n".join(lines)))
    click.echo()
    click.echo(printable(agent.prompt, prose=True))
