"""Chat's slash commands for sub-agents (issue 25): ``/fork``, ``/agents``, ``/send``,
``/kill`` (what the chat shows of them unasked: :mod:`ikigai_core.commands.agents_view`).

They call the chat's :class:`~ikigai_core.orchestration.Supervisor` (the one the model's
``agent_*`` tools reach through the API), whose children are the chat's too: their tokens
count in the chat's, Ctrl-C stops the ones the current turn forked, and their approval
questions reach the terminal labelled ``[agent NAME (ID)]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ikigai_core.commands.chat_table import ChatCommand
from ikigai_core.commands.output import printable
from ikigai_core.errors import UsageError

if TYPE_CHECKING:
    from ikigai_core.commands.chat_session import ChatSession
    from ikigai_core.orchestration import Supervisor

OUTPUT_SHOWN = 2000
"""Characters of a child's answer ``/agents ID`` shows (the rest: ``sessions show``)."""


def supervisor_of(chat: ChatSession) -> Supervisor:
    """The chat's supervisor (a usage error outside a chat that runs one)."""
    if chat.agents.supervisor is None:
        raise UsageError("sub-agents are not available in this chat")
    return chat.agents.supervisor


def fork(chat: ChatSession, argument: str) -> None:
    """``/fork [--agent NAME] PROMPT``: start a sub-agent on PROMPT; it runs while you chat."""
    agent = None
    if argument.startswith("--agent"):
        _, agent, argument = (argument.split(None, 2) + ["", ""])[:3]
    if not argument.strip() or agent == "":
        raise UsageError("/fork needs a prompt: /fork [--agent NAME] PROMPT")
    supervisor = supervisor_of(chat)
    chat.tools()  # the chat's discovery, not a second one: the child shares its tools
    agent_id = supervisor.fork(argument, agent=agent)
    status = next((a.status for a in supervisor.list() if a.id == agent_id), "?")
    click.echo(printable(f"Forked {agent_id} ({agent or 'agent'}): {status}. "
                         f"/agents {agent_id} shows its answer."))


def agents(chat: ChatSession, argument: str) -> None:
    """``/agents``: every sub-agent, its status and tokens; ``/agents ID``: one's answer."""
    supervisor = supervisor_of(chat)
    if argument:
        [result] = supervisor.wait([argument], 0)
        tokens = result.usage.total
        click.echo(printable(f"{result.id}: {result.status}, {tokens:,} tokens"
                             + (f"; {result.error}" if result.error else "")))
        output = result.output
        if len(output) > OUTPUT_SHOWN:
            output = output[:OUTPUT_SHOWN - 1] + "…"
        if output:
            click.echo(printable(output, prose=True))
        if result.transcript:
            click.echo(f"(ikigai sessions show {result.transcript})")
        return
    found = supervisor.list()
    if not found:
        names = ", ".join(chat.app.agents)
        click.echo("No sub-agents yet: /fork [--agent NAME] PROMPT starts one"
                   + (f" (agents: {names})." if names else "."))
        return
    for info in found:
        click.echo(printable(f"{'  ' * info.depth}{info.id}  {info.name}  {info.status}  "
                             f"{info.usage.total:,} tokens"))


def send(chat: ChatSession, argument: str) -> None:
    """``/send [--interrupt] ID MESSAGE``: MESSAGE is the sub-agent's next prompt."""
    interrupt = argument.startswith("--interrupt")
    if interrupt:
        argument = argument[len("--interrupt"):].strip()
    agent_id, _, message = argument.partition(" ")
    if not message.strip():
        raise UsageError("/send needs an agent and a message: /send [--interrupt] ID MESSAGE")
    supervisor_of(chat).send(agent_id, message.strip(), interrupt=interrupt)
    click.echo(printable(f"Sent to {agent_id}."))


def kill(chat: ChatSession, argument: str) -> None:
    """``/kill [--no-cascade] ID``: stop a sub-agent, its tools and (unless ``--no-cascade``)
    the agents it forked."""
    cascade = not argument.startswith("--no-cascade")
    if not cascade:
        argument = argument[len("--no-cascade"):].strip()
    if not argument:
        raise UsageError("/kill needs an agent id: /kill [--no-cascade] ID; /agents lists them")
    supervisor = supervisor_of(chat)
    below = len(supervisor.list(caller=argument)) if argument in _ids(supervisor) else 0
    info = supervisor.kill(argument, cascade=cascade)
    chat.agents.say_news()
    agents_below = f"{below} agent{'s' * (below > 1)} below it"
    if not below:
        tail = "."
    elif cascade:
        tail = f" with {agents_below}."
    else:
        tail = f"; the {agents_below} run{'s' * (below == 1)} on."
    click.echo(printable(f"{info.id} {info.status}{tail}"))


def _ids(supervisor: Supervisor) -> set[str]:
    return {a.id for a in supervisor.list()}


COMMANDS = (
    ChatCommand("/fork", "/fork PROMPT", fork,
                (("/fork PROMPT", "start a sub-agent on PROMPT (--agent NAME: a definition)"),)),
    ChatCommand("/agents", "/agents [ID]", agents,
                (("/agents", "list the sub-agents: status and tokens"),
                 ("/agents ID", "a sub-agent's status and answer"))),
    ChatCommand("/send", "/send ID MESSAGE", send,
                (("/send ID MESSAGE", "a sub-agent's next prompt (--interrupt: at once)"),)),
    ChatCommand("/kill", "/kill ID", kill,
                (("/kill ID", "stop a sub-agent and the agents it forked (--no-cascade: "
                              "only it)"),)),
)
