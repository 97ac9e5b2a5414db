"""``ikigai request``, ``ask`` and ``chat``: a model that calls the discovered tools."""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from ikigai_core.agent import Agent, build_request
from ikigai_core.app import App
from ikigai_core.commands import chat_skills
from ikigai_core.commands.approving import approval_options, grants, guard_line, terminal_asker
from ikigai_core.commands.output import echo_json, printable, warn
from ikigai_core.commands.tools import echo_tool, pass_app, refresh_tools, report_skipped
from ikigai_core.conversation import Conversation, ToolCall, UserMessage
from ikigai_core.errors import IkigaiError, UsageError
from ikigai_core.prompt import system_prompt, with_skill
from ikigai_core.providers import INSTALL_HINT, collect_providers, get_provider
from ikigai_core.statefiles import ensure_private_dir
from ikigai_core.toolset import Toolset
from ikigai_core.transport import api_key

if TYPE_CHECKING:
    from ikigai_core.conversation import AssistantMessage
    from ikigai_core.discovery import Discovery
    from ikigai_core.providers import Provider
    from ikigai_core.registry import Registry

PROMPT = "> "
ARGUMENTS_SHOWN = 100
"""Characters of a tool call's arguments shown on its activity line."""
SPIN_INTERVAL = 0.1
SPINNER = "|/-\\"
HISTORY_LENGTH = 1000
"""Lines of chat history kept in ``$IKIGAI_HOME/history``."""
HELP = f"""\
/tool         list the available tools
/tool NAME    show one tool's schema and path
/refresh      ask every tool for its schema again
{chat_skills.HELP}
/help         this help
/quit         leave (Ctrl-D too)
Anything else is sent to the model."""


def choose_provider(app: App, name: str | None) -> Provider:
    """``--provider`` > ``IKIGAI_PROVIDER``/config > the first installed one with its key
    set > the first with its base URL set (a local server needs no key)."""
    name = name or app.settings.provider
    if name:
        return get_provider(app.pm, name, app.notices)
    providers = collect_providers(app.pm, app.notices)
    for signs in (lambda p: p.api_key_env, lambda p: (p.base_url_env,)):
        for provider in providers.values():
            if any(app.environ.get(var) for var in signs(provider)):
                return provider
    if not providers:
        raise UsageError(f"No provider installed. {INSTALL_HINT}")
    raise UsageError(
        "No provider chosen: pass --provider NAME or set IKIGAI_PROVIDER "
        f"(installed: {', '.join(providers)})"
    )


def choose_model(app: App, provider: Provider, name: str | None) -> str:
    """``--model`` > ``IKIGAI_MODEL``/config > the provider's default model."""
    return name or app.settings.model or provider.default_model


def _options(*options: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def apply(command: Any) -> Any:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


_model_options = _options(
    click.option("--provider", metavar="NAME", help="Provider plugin (default: IKIGAI_PROVIDER, "
                 "config.json, else the first installed one whose API key is set)."),
    click.option("--model", metavar="NAME", help="Model (default: IKIGAI_MODEL, config.json, "
                 "else the provider's default)."),
)
_model_options = _options(
    _model_options,
    click.option("--system", metavar="TEXT|@FILE", help="The system prompt to use instead "
                 "of the default (else system_prompt in config.json, else "
                 "$IKIGAI_HOME/system.md); @FILE reads it from FILE."),
    click.option("--skill", "skills", multiple=True, metavar="NAME",
                 help="Load this skill before the first message (repeatable)."),
    click.option("--tools", metavar="A,B", help="Send only these tools (default: "
                 "enabled_tools/disabled_tools in config.json, else every tool)."),
    click.option("--no-tools", is_flag=True, help="Send no tools."),
)
_agent_options = _options(
    _model_options,
    click.option("--stream/--no-stream", default=True, show_default=True,
                 help="Show the answer as it arrives, or only once each turn is complete."),
    *approval_options,
    click.option("--max-turns", type=click.IntRange(min=1), metavar="N",
                 help="Stop after N model turns (default: IKIGAI_MAX_TURNS, config.json, 25)."),
)


class _Terminal:
    """The model's text on stdout as it arrives; tool activity on stderr, on lines of its own."""

    def __init__(self) -> None:
        self.last = ""

    def text(self, piece: str) -> None:
        """Print a piece of the model's text."""
        click.echo(printable(piece), nl=False)
        self.last = piece[-1:] or self.last

    def end_line(self) -> None:
        """End the model's line, if text is waiting on one."""
        if self.last not in ("", "\n"):
            click.echo()
        self.last = ""

    def tool_start(self, call: ToolCall) -> None:
        """``ikigai: → bash {"command": ...}``."""
        self.end_line()
        shown = "(unreadable arguments)"
        if call.arguments is not None:
            shown = json.dumps(call.arguments, ensure_ascii=False)
        if len(shown) > ARGUMENTS_SHOWN:
            shown = shown[: ARGUMENTS_SHOWN - 1] + "…"
        warn(f"→ {call.name} {shown}")

    def tool_end(self, call: ToolCall, envelope: Mapping[str, Any]) -> None:
        """``ikigai: ← bash ok``, or the error code."""
        status = "ok" if envelope.get("tool_success") else envelope.get("error_code", "failed")
        warn(f"← {call.name} {status}")


def _agent(app: App, terminal: _Terminal, provider: str | None, model: str | None,
           stream: bool, max_turns: int | None) -> Agent:
    """The agent the options ask for; a missing API key fails here, before any discovery."""
    chosen = choose_provider(app, provider)
    api_key(chosen, app.environ)
    return Agent(
        app, chosen, choose_model(app, chosen, model), stream=stream,
        max_turns=max_turns or app.settings.max_turns, on_text=terminal.text,
        on_tool_start=terminal.tool_start, on_tool_end=terminal.tool_end,
    )


def report_empty(reply: AssistantMessage) -> None:
    """On stderr: the model's last turn had neither text nor tool calls (else nothing shows)."""
    if not reply.text.strip() and not reply.tool_calls:
        why = f" (stop reason: {reply.stop_reason})" if reply.stop_reason else ""
        warn(f"the model answered with no text and no tool calls{why}")


def report_unfit(provider: Provider, registry: Registry) -> None:
    """On stderr: each tool left out of ``provider``'s requests, and why (one line each)."""
    for fit in provider.fit_tools(registry.values()):
        if fit.declaration is None:
            warn(f"tool '{fit.tool}' left out of requests to {provider.name}: {fit.reason}; "
                 f"see `ikigai tool check {fit.tool}`")


def _discovered(app: App, provider: Provider, toolset: Toolset) -> Registry:
    registry = app.registry()
    report_skipped(registry, verbose=False)
    report_unfit(provider, registry)
    toolset.verify(registry)
    return registry


def _start(app: App, system: str | None, skills: tuple[str, ...], tools: str | None,
           no_tools: bool) -> tuple[Conversation, Toolset]:
    """The conversation's system prompt and toolset, as the options ask (the skills of
    ``--skill`` loaded); an unknown skill or unreadable ``@FILE`` is a usage error."""
    if system is not None:
        app.settings = replace(app.settings, system_prompt=_read_system(system))
    report_skipped(app.skills, verbose=False, what="skill")
    toolset = Toolset.chosen(app.settings, app.skills, tools=tools, no_tools=no_tools)
    conversation = Conversation(system=system_prompt(app))
    for name in skills:
        conversation.system = with_skill(conversation.system, toolset.load(name))
    return conversation, toolset


def _read_system(value: str) -> str:
    """``--system TEXT`` is the text; ``--system @FILE`` is FILE's."""
    if not value.startswith("@"):
        return value
    path = Path(value[1:]).expanduser()
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"--system {value}: the file is not UTF-8 text") from None
    except OSError as exc:
        raise UsageError(f"--system {value}: cannot read {path}: {exc.strerror}") from None


@click.command("request")
@click.argument("prompt")
@_model_options
@click.option("--stream/--no-stream", default=True, show_default=True,
              help="Build the body of a streamed request, or of one answered whole.")
@pass_app
def request(app: App, prompt: str, provider: str | None, model: str | None,
            stream: bool, system: str | None, skills: tuple[str, ...], tools: str | None,
            no_tools: bool) -> None:
    """Print the request body ikigai would send for PROMPT: the system prompt and the
    chosen tools (no network, no key)."""
    chosen = choose_provider(app, provider)
    conversation, toolset = _start(app, system, skills, tools, no_tools)
    conversation.add(UserMessage(prompt))
    body = build_request(chosen, conversation, _discovered(app, chosen, toolset),
                         model=choose_model(app, chosen, model), stream=stream,
                         toolset=toolset)
    echo_json(body)


@click.command("ask")
@click.argument("prompt")
@_agent_options
@pass_app
def ask(app: App, prompt: str, provider: str | None, model: str | None, stream: bool,
        system: str | None, skills: tuple[str, ...], tools: str | None, no_tools: bool,
        max_turns: int | None, yes: bool, allow: tuple[str, ...]) -> None:
    """Ask the model PROMPT once: the answer on stdout, the tools it calls on stderr.

    Nobody is asked to approve a call: one that would ask is denied unless --yes or
    --allow covers it."""
    from ikigai_core.defaults.approvals import granted

    if not prompt.strip():
        raise UsageError("the prompt is empty; say what to ask, e.g. ikigai ask 'list the files'")
    terminal = _Terminal()
    agent = _agent(app, terminal, provider, model, stream, max_turns)
    conversation, agent.toolset = _start(app, system, skills, tools, no_tools)
    agent.registry = _discovered(app, agent.provider, agent.toolset)
    try:
        with granted(grants(yes, allow)):
            reply = agent.run(conversation, prompt)
    finally:
        terminal.end_line()
    report_empty(reply)


@click.command("chat")
@_agent_options
@pass_app
def chat(app: App, provider: str | None, model: str | None, stream: bool,
         system: str | None, skills: tuple[str, ...], tools: str | None, no_tools: bool,
         max_turns: int | None, yes: bool, allow: tuple[str, ...]) -> None:
    """Talk with the model; /help lists the commands. Reads one message per line from a pipe.

    On a terminal, a tool call that needs approval asks you; from a pipe it is denied
    unless --yes or --allow covers it."""
    from ikigai_core.defaults.approvals import granted

    terminal = _Terminal()
    agent = _agent(app, terminal, provider, model, stream, max_turns)
    run_grants = grants(yes, allow)
    conversation, agent.toolset = _start(app, system, skills, tools, no_tools)
    discovery = app.discovery()
    discovery.start()  # the prompt comes up now; a submit waits for the tools
    interactive = sys.stdin.isatty()
    if interactive:
        app.ask_user = terminal_asker()
        where = f" in project {app.project}" if app.project else ""
        warn(f"chatting with {agent.provider.name} {agent.model}{where}; /help for commands")
        warn(guard_line(app, run_grants))
    session = _Chat(app, agent, discovery, terminal, conversation)
    try:
        with granted(run_grants):
            for line in _lines(interactive, app.home / "history"):
                if not session.handle(line.strip()):
                    break
    except KeyboardInterrupt:  # at the prompt: leave, like Ctrl-D
        click.echo()
    finally:
        discovery.cancel()  # quitting before the tools were found must not wait for them
    if session.failure is not None:  # a script piping messages learns the last one failed
        sys.exit(session.failure.exit_code)


def _lines(interactive: bool, history: Path) -> Iterator[str]:
    """Lines typed at a prompt (with line editing and ``history``), or one message per line
    from a pipe (no prompt noise)."""
    if not interactive:
        yield from sys.stdin
        return
    with _line_editing(history):
        while True:
            try:
                yield input(PROMPT)
            except EOFError:
                click.echo()
                return


@contextmanager
def _line_editing(history: Path) -> Iterator[None]:
    """Arrow keys and history at the prompt (readline), the history kept user-only in
    ``history`` between chats. Without readline the prompt is plain ``input()``."""
    try:
        import readline
    except ImportError:  # pragma: no cover - a Python built without readline
        yield
        return
    with suppress(OSError):
        readline.read_history_file(history)
    readline.set_history_length(HISTORY_LENGTH)
    try:
        yield
    finally:
        with suppress(OSError):
            ensure_private_dir(history.parent)
            readline.write_history_file(history)
            history.chmod(0o600)


class _Chat:
    """One chat: the conversation, the tools (discovered in the background), the commands."""

    def __init__(self, app: App, agent: Agent, discovery: Discovery, terminal: _Terminal,
                 conversation: Conversation):
        self.app = app
        self.agent = agent
        self.discovery = discovery
        self.terminal = terminal
        self.conversation = conversation
        self.registry: Registry | None = None
        self.failure: IkigaiError | None = None
        """Why the last message sent to the model failed; ``None`` once one succeeds."""

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
            self.terminal.end_line()
            warn("interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc))
        self.terminal.end_line()
        return True

    def send(self, message: str) -> None:
        """Send ``message`` to the model, with the tools; remember whether it failed."""
        self.failure = None
        try:
            self.agent.registry = self.tools()
            reply = self.agent.run(self.conversation, message)
        except IkigaiError as exc:
            self.failure = exc
            raise
        finally:  # the agent rediscovers (a Registry again) when a plugin's tools change
            self.registry = cast("Registry", self.agent.registry)
        self.terminal.end_line()
        report_empty(reply)

    def command(self, name: str, argument: str = "") -> bool:
        """``/tool [NAME]``, ``/refresh``, ``/help``, the table of
        :mod:`~ikigai_core.commands.chat_skills`; ``False`` for ``/quit``."""
        if name == "/quit":
            return False
        if name == "/help":
            click.echo(HELP)
        elif name == "/refresh":
            with suppress(IkigaiError):  # never two discoveries at once: let start-up's end
                wait_for_tools(self.discovery, spin=sys.stderr.isatty())
            self.registry = refresh_tools(self.app)
            report_unfit(self.agent.provider, self.registry)
        elif name == "/tool":
            self.show_tools(argument.strip())
        elif name in chat_skills.COMMANDS:
            chat_skills.COMMANDS[name](self, argument.strip())
        else:
            warn(f"unknown command {name}; commands: /tool [NAME], /refresh, "
                 f"{', '.join(chat_skills.COMMANDS)}, /help, /quit")
        return True

    def show_tools(self, name: str) -> None:
        """List every tool, or show the one called ``name``."""
        registry = self.tools()
        if name:
            tool = registry.get(name)
            if tool is None:
                raise IkigaiError(f"unknown tool '{name}'; /tool lists them")
            echo_tool(tool)
            return
        click.echo("Available tools:" if registry else "No tools available.")
        for tool in registry.values():
            click.echo(printable(f"  {tool.name} ({tool.location})"))

    def tools(self) -> Registry:
        """The registry, waiting for discovery the first time (a spinner on a terminal)."""
        if self.registry is None:
            self.registry = wait_for_tools(self.discovery, spin=sys.stderr.isatty())
            report_skipped(self.registry, verbose=False)
            report_unfit(self.agent.provider, self.registry)
            self.agent.toolset.verify(self.registry)
        return self.registry


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

