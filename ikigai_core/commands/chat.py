"""``ikigai chat``: one conversation, its slash commands, and the prompt that feeds it.

Slash commands come from :data:`CHAT_COMMANDS`; add one with :func:`chat_command`. The
look of the chat is its front end (:mod:`ikigai_core.commands.frontend`): plain text on a
pipe, with ``NO_COLOR`` or ``--plain``; rendered on a terminal.
"""

from __future__ import annotations

import sys
from contextlib import suppress
from typing import TYPE_CHECKING

import click

from ikigai_core.commands import chat_agents, chat_context, chat_skills
from ikigai_core.commands.agent import (
    agent_options,
    cli_session,
    continue_option,
    image_option,
    read_images,
    resume_option,
    use_reasoning,
)
from ikigai_core.commands.approving import APPROVALS, grants, guard_line
from ikigai_core.commands.chat_session import ChatSession, wait_for_tools
from ikigai_core.commands.chat_table import CHAT_COMMANDS, chat_command
from ikigai_core.commands.frontend import front_end, plain_option
from ikigai_core.commands.output import printable, warn
from ikigai_core.commands.reporting import report_unfit
from ikigai_core.commands.tools import echo_tool, pass_app, refresh_tools
from ikigai_core.errors import IkigaiError, UsageError

if TYPE_CHECKING:
    from ikigai_core.app import App

RECENT_SESSIONS = 10
"""Conversations ``/sessions`` lists, the most recent first."""


def help_text() -> str:
    """What ``/help`` prints: one line per usage, then what anything else does."""
    lines = [f"{usage:<13} {what}" for command in CHAT_COMMANDS.values()
             for usage, what in command.help]
    return "\n".join([*lines, "Anything else is sent to the model."])


def handle(chat: ChatSession, line: str) -> bool:
    """Run one command or send one message; ``False`` means leave.

    Ctrl-C or an error cancels only this line: it is reported and the chat goes on.
    """
    try:
        if line.startswith("/"):
            return run_command(chat, *line.split(None, 1))
        if line:
            chat.send(line)
    except (KeyboardInterrupt, IkigaiError) as exc:
        chat.front.end_line()
        warn("interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc))
    chat.front.end_line()
    chat.agents.say_news()
    return True


def run_command(chat: ChatSession, name: str, argument: str = "") -> bool:
    """Run the slash command ``name``; ``False`` when it leaves the chat."""
    command = CHAT_COMMANDS.get(name)
    if command is None:
        known = ", ".join(c.usage for c in CHAT_COMMANDS.values())
        warn(f"unknown command {name}; commands: {known}")
        return True
    return command.run(chat, argument.strip()) is not False


@chat_command("/tool", "/tool [NAME]", ("/tool", "list the available tools"),
              ("/tool NAME", "show one tool's schema and path"))
def _tool(chat: ChatSession, name: str) -> None:
    registry = chat.tools()
    if name:
        tool = registry.get(name)
        if tool is None:
            raise IkigaiError(f"unknown tool '{name}'; /tool lists them")
        echo_tool(tool)
        return
    click.echo("Available tools:" if registry else "No tools available.")
    for tool in registry.values():
        click.echo(printable(f"  {tool.name} ({tool.location})"))


@chat_command("/refresh", "/refresh", ("/refresh", "ask every tool for its schema again"))
def _refresh(chat: ChatSession, argument: str) -> None:
    with suppress(IkigaiError):  # never two discoveries at once: let start-up's end
        wait_for_tools(chat.discovery, spin=sys.stderr.isatty())
    chat.registry = registry = refresh_tools(chat.app)
    report_unfit(chat.agent.provider, registry)


CHAT_COMMANDS.update((command.name, command) for command in chat_skills.COMMANDS)
CHAT_COMMANDS.update((command.name, command) for command in chat_agents.COMMANDS)


@chat_command("/model", "/model NAME", ("/model NAME", "switch to the model NAME"))
def _model(chat: ChatSession, name: str) -> None:
    if not name:
        raise UsageError(f"/model needs a name; the model now is {chat.agent.model}")
    from ikigai_core.commands.models import warn_unknown_model

    warn_unknown_model(chat.session.app, chat.session.provider, name)
    chat.session.model = name
    click.echo(printable(f"model: {name}"))


@chat_command("/clear", "/clear", ("/clear", "start a new conversation"))
def _clear(chat: ChatSession, argument: str) -> None:
    chat.session.clear()
    chat.front.cleared()


@chat_command("/resume", "/resume [ID]",
              ("/resume", "go on with the last conversation in this directory"),
              ("/resume ID", "go on with conversation ID (or the start of its id)"))
def _resume(chat: ChatSession, session_id: str) -> None:
    chat.resume(session_id or None, last=not session_id)


@chat_command("/sessions", "/sessions", ("/sessions", "list the recent conversations"))
def _sessions(chat: ChatSession, argument: str) -> None:
    from ikigai_core.commands.session_tree import Tree
    from ikigai_core.commands.sessions import summary_line
    from ikigai_core.session import store_of

    tree = Tree(store_of(chat.app).sessions())
    found = tree.roots()
    if not found:
        click.echo("No conversations recorded yet.")
    for summary in found[:RECENT_SESSIONS]:
        click.echo(summary_line(summary, tree))
    if len(found) > RECENT_SESSIONS:
        click.echo(f"… {len(found) - RECENT_SESSIONS} more: `ikigai sessions list` shows all")


@chat_command("/approve", "/approve [yes|ask]",
              ("/approve", "say how tool calls are sandboxed and approved"),
              ("/approve yes", "approve every call that would ask (a deny rule still denies)"),
              ("/approve ask", "ask again"))
def _approve(chat: ChatSession, argument: str) -> None:
    if argument not in ("", "yes", "ask"):
        raise UsageError(f"/approve {argument}: say /approve yes or /approve ask")
    if argument and chat.app.pm.is_blocked(APPROVALS):
        raise UsageError(f"/approve {argument}: every call runs, the approvals plugin "
                         f"{APPROVALS} is disabled")
    if argument:  # the chat's session: its sub-agents' next calls are judged by it too
        chat.session.grants = chat.session.grants.replace(yes=argument == "yes")
    click.echo(guard_line(chat.app, chat.session.grants))


CHAT_COMMANDS.update((command.name, command) for command in chat_context.COMMANDS)


@chat_command("/help", "/help", ("/help", "this help"))
def _help(chat: ChatSession, argument: str) -> None:
    click.echo(help_text())


@chat_command("/quit", "/quit", ("/quit", "leave (Ctrl-D too)"))
def _quit(chat: ChatSession, argument: str) -> bool:
    return False


@click.command("chat")
@agent_options
@plain_option
@continue_option
@resume_option
@image_option
@pass_app
def chat(app: App, provider: str | None, model: str | None, stream: bool,
         max_turns: int | None, max_cost: float | None, no_log: bool, plain: bool,
         resume_last: bool, resume: str | None, images: tuple[str, ...], yes: bool,
         allow: tuple[str, ...], system: str | None, skills: tuple[str, ...],
         tools: str | None, no_tools: bool, reasoning: str | None) -> None:
    """Talk with the model; /help lists the commands. Reads one message per line from a pipe.

    @path in a message attaches that file: its text, or an image the model reads.

    On a terminal, a tool call that needs approval asks you; from a pipe it is denied
    unless --yes or --allow covers it."""
    attached = read_images(images)
    use_reasoning(app, reasoning)
    run_grants = grants(yes, allow)
    front = front_end(app, plain=plain, interactive=True)
    root = cli_session(
        app, front, "chat", provider=provider, model=model, stream=stream, max_turns=max_turns,
        max_cost=max_cost, no_log=no_log, system=system, skills=skills, tools=tools,
        no_tools=no_tools)
    root.grants = run_grants
    from ikigai_core.orchestration import serving

    with serving(root) as supervisor:  # the agents API; its end stops every sub-agent
        session = ChatSession(root, app.discovery(), front, attached)
        supervisor.on_event = session.agents.event
        session.agents.supervisor = supervisor
        session.agents.interject = front.interject
        session.agents.redraw = front.redraw
        session.resume(resume, resume_last)
        front.started(session, guard_line(app, run_grants))
        root.ask = app.ask_user  # the terminal's asker, when the front end has one
        discovery = session.discovery
        discovery.start()  # after the prompt's imports (not sharing the GIL with them); the
        # prompt comes up now and a submit waits for the tools
        root.warm()  # httpx and the provider's client, meanwhile: a first /fork or message
        # goes out at once
        try:
            for line in front.lines():
                if not handle(session, line.strip()):
                    break
        except KeyboardInterrupt:  # at the prompt: leave, like Ctrl-D
            click.echo()
        finally:
            discovery.cancel()  # quitting before the tools were found must not wait for them
    if session.failure is not None:  # a script piping messages learns the last one failed
        sys.exit(session.failure.exit_code)
