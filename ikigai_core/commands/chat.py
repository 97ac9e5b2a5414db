"""``ikigai chat``: one conversation, its slash commands, and the prompt that feeds it.

Slash commands come from :data:`CHAT_COMMANDS`; add one with :func:`chat_command`. The
look of the chat is its front end (:mod:`ikigai_core.commands.frontend`): plain text on a
pipe, with ``NO_COLOR`` or ``--plain``; rendered on a terminal.
"""

from __future__ import annotations

import itertools
import sys
from contextlib import suppress
from typing import TYPE_CHECKING, cast

import click

from ikigai_core.commands import chat_skills
from ikigai_core.commands.agent import (
    agent_options,
    continue_option,
    make_agent,
    report_empty,
    report_unfit,
    start_conversation,
)
from ikigai_core.commands.approving import APPROVALS, grants, guard_line
from ikigai_core.commands.chat_table import CHAT_COMMANDS, chat_command
from ikigai_core.commands.frontend import front_end, plain_option
from ikigai_core.commands.output import printable, warn
from ikigai_core.commands.sessions import Recorder
from ikigai_core.commands.tools import echo_tool, pass_app, refresh_tools, report_skipped
from ikigai_core.conversation import Conversation, Usage, UserMessage, usage_of
from ikigai_core.errors import IkigaiError, UsageError

if TYPE_CHECKING:
    from ikigai_core.agent import Agent
    from ikigai_core.app import App
    from ikigai_core.commands.frontend import FrontEnd
    from ikigai_core.discovery import Discovery
    from ikigai_core.registry import Registry

SPIN_INTERVAL = 0.1
SPINNER = "|/-\\"


def help_text() -> str:
    """What ``/help`` prints: one line per usage, then what anything else does."""
    lines = [f"{usage:<13} {what}" for command in CHAT_COMMANDS.values()
             for usage, what in command.help]
    return "\n".join([*lines, "Anything else is sent to the model."])


class ChatSession:
    """One chat: the conversation, the tools (discovered in the background), the commands.

    :param app: the invocation.
    :param agent: the model and how it reports to ``front``.
    :param discovery: the start-up discovery, already started.
    :param front: how the chat looks (plain or rendered).
    :param recorder: writes each answered prompt to the session log.
    :param fresh: the conversation as the command line starts it (its system prompt, the
        ``--skill`` skills loaded); ``/clear`` goes back to it, even after :meth:`resume`.
    """

    def __init__(self, app: App, agent: Agent, discovery: Discovery, front: FrontEnd,
                 recorder: Recorder, fresh: Conversation):
        self.app = app
        self.agent = agent
        self.discovery = discovery
        self.front = front
        self.recorder = recorder
        self.fresh_system = fresh.system
        self.fresh_skills = tuple(agent.toolset.loaded)
        self.conversation = fresh
        self.registry: Registry | None = None
        self.failure: IkigaiError | None = None
        """Why the last message sent to the model failed; ``None`` once one succeeds."""
        self.turn_usage = Usage()
        """Tokens the last prompt used (every model turn it took)."""
        self.usage = Usage()
        """Tokens this chat used."""

    def handle(self, line: str) -> bool:
        """Run one command or send one message; ``False`` means leave.

        Ctrl-C or an error cancels only this line: it is reported and the chat goes on.
        """
        try:
            if line.startswith("/"):
                return self.command(*line.split(None, 1))
            if line:
                self.send(line)
        except (KeyboardInterrupt, IkigaiError) as exc:
            self.front.end_line()
            warn("interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc))
        self.front.end_line()
        return True

    def resume(self, session: str | None, last: bool) -> None:
        """Go on with the conversation ``session`` (``--resume``), or with ``last`` the last
        one here (``--continue``), its skills loaded again; neither: nothing changes."""
        earlier = self.recorder.resume(self.agent.provider.name, self.agent.toolset,
                                       session=session, last=last)
        if earlier is not None:
            self.conversation = earlier
            prompts = sum(isinstance(m, UserMessage) for m in earlier.messages)
            warn(f"continuing session {self.recorder.session_id} ({prompts} earlier prompts)")

    def clear(self) -> None:
        """Start a new conversation, as the command line started the first: the skills
        loaded since (by ``/load`` or the model) are gone, their text and their tools."""
        self.agent.toolset.unload(keep=self.fresh_skills)
        self.conversation = Conversation(system=self.fresh_system)
        self.recorder.restart()

    def send(self, message: str) -> None:
        """Send ``message`` to the model and show the turn; remember whether it failed."""
        self.failure = None
        mark = len(self.conversation.messages)
        try:
            self.agent.registry = self.tools()
            with self.front.turn():
                reply = self.agent.run(self.conversation, message)
        except IkigaiError as exc:
            self.failure = exc
            raise
        finally:  # the agent rediscovers (a Registry again) when a plugin's tools change
            self.registry = cast("Registry", self.agent.registry)
        self.turn_usage = usage_of(self.conversation.messages[mark:])
        self.usage += self.turn_usage
        self.recorder.record(self.agent, self.conversation, mark, message)
        report_empty(reply)

    def command(self, name: str, argument: str = "") -> bool:
        """Run the slash command ``name``; ``False`` when it leaves the chat."""
        command = CHAT_COMMANDS.get(name)
        if command is None:
            known = ", ".join(c.usage for c in CHAT_COMMANDS.values())
            warn(f"unknown command {name}; commands: {known}")
            return True
        return command.run(self, argument.strip()) is not False

    def tools_found(self) -> Registry | None:
        """The registry if discovery has ended (never waits): completion offers its names."""
        if self.registry is not None:
            return self.registry
        with suppress(IkigaiError):  # the failure is reported when a message needs tools
            return self.discovery.wait(0)
        return None

    def tools(self) -> Registry:
        """The registry, waiting for discovery the first time (a spinner on a terminal)."""
        if self.registry is None:
            self.registry = wait_for_tools(self.discovery, spin=sys.stderr.isatty())
            report_skipped(self.registry, verbose=False)
            report_unfit(self.agent.provider, self.registry)
            self.agent.toolset.verify(self.registry)
        return self.registry


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
    chat.registry = refresh_tools(chat.app)
    report_unfit(chat.agent.provider, chat.registry)


CHAT_COMMANDS.update((command.name, command) for command in chat_skills.COMMANDS)


@chat_command("/model", "/model NAME", ("/model NAME", "switch to the model NAME"))
def _model(chat: ChatSession, name: str) -> None:
    if not name:
        raise UsageError(f"/model needs a name; the model now is {chat.agent.model}")
    chat.agent.model = name
    click.echo(printable(f"model: {name}"))


@chat_command("/clear", "/clear", ("/clear", "start a new conversation"))
def _clear(chat: ChatSession, argument: str) -> None:
    chat.clear()
    chat.front.cleared()


@chat_command("/approve", "/approve [yes|ask]",
              ("/approve", "say how tool calls are sandboxed and approved"),
              ("/approve yes", "approve every call that would ask (a deny rule still denies)"),
              ("/approve ask", "ask again"))
def _approve(chat: ChatSession, argument: str) -> None:
    from ikigai_core.defaults.approvals import approve_all, current_grants

    if argument not in ("", "yes", "ask"):
        raise UsageError(f"/approve {argument}: say /approve yes or /approve ask")
    if argument and chat.app.pm.is_blocked(APPROVALS):
        raise UsageError(f"/approve {argument}: every call runs, the approvals plugin "
                         f"{APPROVALS} is disabled")
    grants = approve_all(argument == "yes") if argument else current_grants()
    click.echo(guard_line(chat.app, grants))


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
@click.option("--resume", metavar="ID", help="Go on with the conversation ID (or the start "
              "of its id; `ikigai sessions list` shows them).")
@pass_app
def chat(app: App, provider: str | None, model: str | None, stream: bool,
         max_turns: int | None, no_log: bool, plain: bool, resume_last: bool,
         resume: str | None, yes: bool, allow: tuple[str, ...], system: str | None,
         skills: tuple[str, ...], tools: str | None, no_tools: bool) -> None:
    """Talk with the model; /help lists the commands. Reads one message per line from a pipe.

    On a terminal, a tool call that needs approval asks you; from a pipe it is denied
    unless --yes or --allow covers it."""
    from ikigai_core.defaults.approvals import granted

    run_grants = grants(yes, allow)
    front = front_end(app, plain=plain, interactive=True)
    agent = make_agent(app, front, provider, model, stream, max_turns)
    recorder = Recorder(app, "chat", enabled=app.settings.log and not no_log)
    conversation, agent.toolset = start_conversation(app, system, skills, tools, no_tools)
    discovery = app.discovery()
    session = ChatSession(app, agent, discovery, front, recorder, conversation)
    session.resume(resume, resume_last)
    front.started(session, guard_line(app, run_grants))
    discovery.start()  # after the prompt's imports (not sharing the GIL with them); the
    # prompt comes up now and a submit waits for the tools
    try:
        with granted(run_grants):
            for line in front.lines():
                if not session.handle(line.strip()):
                    break
    except KeyboardInterrupt:  # at the prompt: leave, like Ctrl-D
        click.echo()
    finally:
        discovery.cancel()  # quitting before the tools were found must not wait for them
    if session.failure is not None:  # a script piping messages learns the last one failed
        sys.exit(session.failure.exit_code)


def wait_for_tools(discovery: Discovery, *, spin: bool) -> Registry:
    """Wait for ``discovery``; with ``spin``, show a spinner on stderr meanwhile."""
    frames = itertools.cycle(SPINNER)
    shown = False
    while (registry := discovery.wait(SPIN_INTERVAL if spin else None)) is None:
        shown = True
        click.echo(f"\r{next(frames)} discovering tools...", nl=False, err=True)
    if shown:
        click.echo("\r\x1b[K", nl=False, err=True, color=True)  # erase the spinner line
    return registry
