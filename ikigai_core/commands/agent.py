"""``ikigai request`` and ``ask``, and what ``chat`` shares with them: the options, and the
core :class:`~ikigai_core.session.Session` they ask for, with what is said on stderr."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ikigai_core.app import App
from ikigai_core.commands.approving import approval_options, grants
from ikigai_core.commands.frontend import QuietFrontEnd, front_end, plain_option
from ikigai_core.commands.output import be_quiet, echo_json, warn
from ikigai_core.commands.reporting import report_empty, report_unfit
from ikigai_core.commands.tools import pass_app, report_skipped
from ikigai_core.conversation import ToolResultsMessage
from ikigai_core.errors import UsageError
from ikigai_core.session import Session, choose_model, choose_provider, ready_provider
from ikigai_core.session import start_conversation as core_start

if TYPE_CHECKING:
    from ikigai_core.attachments import Attachment
    from ikigai_core.commands.chatview import FrontEnd
    from ikigai_core.conversation import AssistantMessage, Conversation
    from ikigai_core.providers import Provider
    from ikigai_core.registry import Registry
    from ikigai_core.toolset import Toolset


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
    click.option("--reasoning", type=click.Choice(["low", "medium", "high"]),
                 help="How hard the model thinks (default: IKIGAI_REASONING, config.json, "
                 "else the model's own): OpenAI's reasoning effort, Anthropic's thinking "
                 "budget, Gemini's thinking level or budget."),
)
agent_options = _options(
    _model_options,
    click.option("--stream/--no-stream", default=True, show_default=True,
                 help="Show the answer as it arrives, or only once each turn is complete."),
    *approval_options,
    click.option("--max-turns", type=click.IntRange(min=1), metavar="N",
                 help="Stop after N model turns (default: IKIGAI_MAX_TURNS, config.json, 25)."),
    click.option("--max-cost", type=click.FloatRange(min=0, min_open=True), metavar="USD",
                 help="Stop once the session has cost USD US dollars (default: "
                      "IKIGAI_MAX_COST, max_cost in config.json, else no cap)."),
    click.option("--no-log", is_flag=True,
                 help="Record nothing in the session log (also: log false in config.json)."),
)
image_option = click.option(
    "--image", "images", multiple=True, metavar="FILE",
    help="Attach the image FILE (PNG, JPEG, GIF or WebP, at most 3.75 MiB) to the first "
         "prompt; the model reads it natively (repeatable).")
continue_option = click.option(
    "--continue", "resume_last", is_flag=True,
    help="Go on with the last conversation in this directory (from the session log).")
resume_option = click.option(
    "--resume", metavar="ID", help="Go on with the conversation ID (or the start of its id; "
    "`ikigai sessions list` shows them).")


def _discovered(app: App, provider: Provider) -> Registry:
    """Discover the tools now, saying which were skipped and which ``provider`` cannot take."""
    registry = app.registry()
    report_skipped(registry, verbose=False)
    report_unfit(provider, registry)
    return registry


def start_conversation(app: App, system: str | None, skills: tuple[str, ...],
                       tools: str | None, no_tools: bool) -> tuple[Conversation, Toolset]:
    """The conversation's system prompt and toolset, as the options ask (the skills of
    ``--skill`` loaded), after saying which skills were skipped and whether the project's
    instructions are sent; an unknown skill or unreadable ``@FILE`` is a usage error."""
    text = None if system is None else _read_system(system)
    report_skipped(app.skills, verbose=False, what="skill")
    report_ignored_instructions(app)
    return core_start(app, system=text, skills=skills, tools=tools, no_tools=no_tools)


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
@continue_option
@resume_option
@pass_app
def request(app: App, prompt: str, provider: str | None, model: str | None,
            stream: bool, system: str | None, skills: tuple[str, ...], tools: str | None,
            no_tools: bool, reasoning: str | None, resume_last: bool,
            resume: str | None) -> None:
    """Print the request body ikigai would send for PROMPT: the system prompt and the
    chosen tools (no network, no key).

    With --continue or --resume, the body the next turn of that conversation sends (nothing
    is recorded): what the model is sent of it (a compaction's summary in place of the
    turns it covers, old tool results pruned to placeholders, the skills loaded). The body
    is the one sent on the wire the provider's settings choose (OpenAI: chat or
    Responses), with its prompt-cache marks."""
    use_reasoning(app, reasoning)
    chosen = choose_provider(app, provider)
    conversation, toolset = start_conversation(app, system, skills, tools, no_tools)
    session = Session(app, chosen, choose_model(app, chosen, model), conversation=conversation,
                      toolset=toolset, stream=stream, log=False, command="request")
    session.resume(resume, last=resume_last)
    session.use_tools(_discovered(app, chosen))
    made = session.next_request(prompt)
    if made.compacts:
        warn("the window is filling up: the next turn compacts the conversation first, "
             "so it sends the model's summary of the older turns, not what is below")
    echo_json(made.request.body)


@click.command("ask")
@click.argument("prompt", required=False)
@agent_options
@plain_option
@continue_option
@resume_option
@image_option
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object: the final text, every tool call with its envelope, "
                   "the token usage (and the prompt cache's), the cost in US dollars, the "
                   "session id, the provider and the model.")
@click.option("-q", "--quiet", is_flag=True,
              help="Only the answer on stdout and errors on stderr: no tool lines, no warnings.")
@click.option("--show-thinking", is_flag=True,
              help="Show the model's thinking, dimmed, on stderr (chat shows it unless "
                   "show_thinking is false).")
@pass_app
def ask(app: App, prompt: str | None, provider: str | None, model: str | None, stream: bool,
        system: str | None, skills: tuple[str, ...], tools: str | None, no_tools: bool,
        reasoning: str | None, max_turns: int | None, max_cost: float | None, no_log: bool,
        plain: bool, resume_last: bool, resume: str | None, images: tuple[str, ...],
        as_json: bool, quiet: bool, show_thinking: bool, yes: bool,
        allow: tuple[str, ...]) -> None:
    """Ask the model PROMPT once: the answer on stdout, the tools it calls on stderr.

    PROMPT is read from stdin when it is -, or missing and stdin is not a terminal.
    Nobody is asked to approve a call: one that would ask is denied unless --yes or
    --allow covers it.
    """
    from ikigai_core.orchestration import serving

    if quiet:
        be_quiet()
    prompt = read_prompt(prompt)
    if not prompt.strip():
        raise UsageError("the prompt is empty; say what to ask, e.g. ikigai ask 'list the files'")
    attached = read_images(images)
    use_reasoning(app, reasoning)
    front = (QuietFrontEnd(app) if as_json
             else front_end(app, plain=plain or quiet, interactive=False))
    front.show_thinking = show_thinking and not as_json
    session = cli_session(app, front, "ask", provider=provider, model=model, stream=stream,
                          max_turns=max_turns, max_cost=max_cost, no_log=no_log,
                          system=system, skills=skills,
                          tools=tools, no_tools=no_tools)
    session.resume(resume, last=resume_last)
    session.grants = grants(yes, allow)
    try:
        with serving(session):  # the agents API (issue 25)
            session.use_tools(_discovered(app, session.provider))
            reply = session.send(prompt, attached)
    finally:
        front.end_line()
    report_empty(reply)
    if as_json:
        echo_json(answer_json(reply, session))


def cli_session(app: App, front: FrontEnd, command: str, *, provider: str | None,
                model: str | None, stream: bool, max_turns: int | None,
                max_cost: float | None, no_log: bool, system: str | None,
                skills: tuple[str, ...], tools: str | None, no_tools: bool) -> Session:
    """The session ``command`` (``ask``, ``chat``) talks through, as its options ask,
    reporting to ``front``; it fails before any discovery when the provider cannot be used."""
    from ikigai_core.budget import Budget
    from ikigai_core.commands.models import warn_unknown_model

    chosen = ready_provider(app, provider)
    named = choose_model(app, chosen, model)
    warn_unknown_model(app, chosen, named)
    started, toolset = start_conversation(app, system, skills, tools, no_tools)
    return Session(app, chosen, named, conversation=started,
                   toolset=toolset, events=front, stream=stream, max_turns=max_turns,
                   command=command, log=app.settings.log and not no_log,
                   budget=Budget(cost=max_cost or app.settings.max_cost))


def use_reasoning(app: App, reasoning: str | None) -> None:
    """``--reasoning`` given wins over the setting."""
    if reasoning is not None:
        app.settings = app.settings.replace(reasoning=reasoning)


def read_images(names: tuple[str, ...]) -> list[Attachment]:
    """The images of ``--image FILE`` options, each read and checked (one line if not)."""
    from ikigai_core.inputs import read_image

    return [read_image(Path(name).expanduser(), name) for name in names]


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


def answer_json(reply: AssistantMessage, session: Session) -> dict[str, Any]:
    """What ``ask --json`` prints: the final text, every tool call of the last prompt with
    its envelope and duration, the tokens it used (the input including the prompt cache's
    reads and writes) and their cost in US dollars (``None``: no price known), its
    sub-agents' included, the session id (``None`` when not recorded), the provider and the
    model."""
    usage = session.turn_usage
    calls = [result for message in session.exchange if isinstance(message, ToolResultsMessage)
             for result in message.results]
    return {
        "text": reply.text,
        "tool_calls": [{"id": r.call.id, "name": r.call.name, "arguments": r.call.arguments,
                        "envelope": dict(r.envelope), "duration": r.duration} for r in calls],
        "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                  "cache_read_tokens": usage.cache_read_tokens,
                  "cache_write_tokens": usage.cache_write_tokens},
        "cost": session.turn_cost,
        "session": session.id,
        "provider": session.provider.name,
        "model": session.model,
    }
