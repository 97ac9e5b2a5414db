"""``ikigai request`` and ``ask``, and what ``chat`` shares with them: choosing the provider,
the model, the system prompt, the toolset and the agent."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ikigai_core.agent import Agent, build_request
from ikigai_core.app import App
from ikigai_core.commands.approving import approval_options, grants
from ikigai_core.commands.frontend import QuietFrontEnd, front_end, plain_option
from ikigai_core.commands.output import echo_json, warn
from ikigai_core.commands.sessions import Recorder
from ikigai_core.commands.tools import pass_app, report_skipped
from ikigai_core.conversation import Conversation, ToolResultsMessage, UserMessage, usage_of
from ikigai_core.errors import UsageError
from ikigai_core.prompt import system_prompt, with_skill
from ikigai_core.providers import INSTALL_HINT, collect_providers, get_provider
from ikigai_core.toolset import Toolset
from ikigai_core.transport import api_key

if TYPE_CHECKING:
    from ikigai_core.commands.frontend import FrontEnd
    from ikigai_core.conversation import AssistantMessage, Message
    from ikigai_core.providers import Provider
    from ikigai_core.registry import Registry


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
agent_options = _options(
    _model_options,
    click.option("--stream/--no-stream", default=True, show_default=True,
                 help="Show the answer as it arrives, or only once each turn is complete."),
    *approval_options,
    click.option("--max-turns", type=click.IntRange(min=1), metavar="N",
                 help="Stop after N model turns (default: IKIGAI_MAX_TURNS, config.json, 25)."),
    click.option("--no-log", is_flag=True,
                 help="Record nothing in the session log (also: log false in config.json)."),
)
continue_option = click.option(
    "--continue", "resume_last", is_flag=True,
    help="Go on with the last conversation in this directory (from the session log).")


def make_agent(app: App, front: FrontEnd, provider: str | None, model: str | None,
               stream: bool, max_turns: int | None) -> Agent:
    """The agent the options ask for, reporting to ``front``; a wrongly configured setting
    or a missing API key fails here, before any discovery."""
    app.settings.verify()
    check_tool_guards(app)
    chosen = choose_provider(app, provider)
    api_key(chosen, app.environ)
    return Agent(
        app, chosen, choose_model(app, chosen, model), stream=stream,
        max_turns=max_turns or app.settings.max_turns, on_request=front.request,
        on_text=front.text, on_tool_start=front.tool_start, on_tool_end=front.tool_end,
    )


def check_tool_guards(app: App) -> None:
    """Fail now, before the model is asked, on what would refuse every tool call later: a
    ``tool_env`` the environment policy cannot read, a sandbox bubblewrap cannot build.
    Each is checked by its own plugin's code, unless that plugin is disabled."""
    from ikigai_core.defaults import sandbox, tool_env

    if not app.pm.is_blocked(tool_env.__name__):
        tool_env.filter_env({}, app.settings.tool_env, ())
    if not app.pm.is_blocked(sandbox.__name__) and app.settings.sandbox != "off":
        sandbox.usable_bwrap()


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


def start_conversation(app: App, system: str | None, skills: tuple[str, ...],
                       tools: str | None, no_tools: bool) -> tuple[Conversation, Toolset]:
    """The conversation's system prompt and toolset, as the options ask (the skills of
    ``--skill`` loaded); an unknown skill or unreadable ``@FILE`` is a usage error."""
    if system is not None:
        app.settings = app.settings._replace(system_prompt=_read_system(system))
    report_skipped(app.skills, verbose=False, what="skill")
    report_ignored_instructions(app)
    toolset = Toolset.chosen(app.settings, app.skills, tools=tools, no_tools=no_tools)
    conversation = Conversation(system=system_prompt(app))
    for name in skills:
        conversation.system = with_skill(conversation.system, toolset.load(name))
    return conversation, toolset


def report_ignored_instructions(app: App) -> None:
    """On stderr, once: an untrusted project's ``AGENTS.md`` is not sent, and how to send it
    (unless the plugin sending it is disabled: then nothing is)."""
    from ikigai_core.defaults.project_instructions import ignored_instructions

    line = ignored_instructions(app.cwd, app.home)
    if line and not app.pm.is_blocked(ignored_instructions.__module__):
        warn(line)


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
    conversation, toolset = start_conversation(app, system, skills, tools, no_tools)
    conversation.add(UserMessage(prompt))
    body = build_request(chosen, conversation, _discovered(app, chosen, toolset),
                         model=choose_model(app, chosen, model), stream=stream,
                         toolset=toolset)
    echo_json(body)


@click.command("ask")
@click.argument("prompt", required=False)
@agent_options
@plain_option
@continue_option
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object: the final text, every tool call with its envelope, "
                   "the token usage and the session id.")
@pass_app
def ask(app: App, prompt: str | None, provider: str | None, model: str | None, stream: bool,
        system: str | None, skills: tuple[str, ...], tools: str | None, no_tools: bool,
        max_turns: int | None, no_log: bool, plain: bool, resume_last: bool,
        as_json: bool, yes: bool, allow: tuple[str, ...]) -> None:
    """Ask the model PROMPT once: the answer on stdout, the tools it calls on stderr.

    PROMPT is read from stdin when it is -, or missing and stdin is not a terminal.
    Nobody is asked to approve a call: one that would ask is denied unless --yes or
    --allow covers it.
    """
    from ikigai_core.defaults.approvals import granted

    prompt = read_prompt(prompt)
    if not prompt.strip():
        raise UsageError("the prompt is empty; say what to ask, e.g. ikigai ask 'list the files'")
    front = QuietFrontEnd(app) if as_json else front_end(app, plain=plain, interactive=False)
    agent = make_agent(app, front, provider, model, stream, max_turns)
    recorder = Recorder(app, "ask", enabled=app.settings.log and not no_log)
    conversation, agent.toolset = start_conversation(app, system, skills, tools, no_tools)
    conversation = (recorder.resume(agent.provider.name, agent.toolset, session=None,
                                    last=resume_last)
                    or conversation)
    agent.registry = _discovered(app, agent.provider, agent.toolset)
    mark = len(conversation.messages)
    try:
        with granted(grants(yes, allow)), front.turn():
            reply = agent.run(conversation, prompt)
    finally:
        front.end_line()
    recorder.record(agent, conversation, mark, prompt)
    report_empty(reply)
    if as_json:
        echo_json(answer_json(reply, conversation.messages[mark:], recorder.session))


def read_prompt(prompt: str | None) -> str:
    """``prompt``, or stdin's text when it is ``-`` (or missing, stdin not a terminal)."""
    if prompt is not None and prompt != "-":
        return prompt
    if prompt is None and sys.stdin.isatty():
        raise UsageError("ask needs a PROMPT (or -, to read it from stdin)")
    text = sys.stdin.read()
    if not text.strip():
        raise UsageError("the prompt read from stdin is empty; pass PROMPT or pipe some text")
    return text


def answer_json(reply: AssistantMessage, messages: Sequence[Message],
                session: str | None) -> dict[str, Any]:
    """What ``ask --json`` prints: the final text, every tool call with its envelope and
    duration, the tokens used, and the session id (``None`` when not recorded)."""
    usage = usage_of(messages)
    calls = [result for message in messages if isinstance(message, ToolResultsMessage)
             for result in message.results]
    return {
        "text": reply.text,
        "tool_calls": [{"id": r.call.id, "name": r.call.name, "arguments": r.call.arguments,
                        "envelope": dict(r.envelope), "duration": r.duration} for r in calls],
        "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens},
        "session": session,
    }
