"""``ikigai sessions list|show|rm``, and the recorder ``ask`` and ``chat`` log through."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from ikigai_core.commands.output import echo_json, printable, warn
from ikigai_core.commands.tools import pass_app
from ikigai_core.errors import IkigaiError, UsageError

if TYPE_CHECKING:
    from ikigai_core.agent import Agent
    from ikigai_core.app import App
    from ikigai_core.conversation import Conversation
    from ikigai_core.sessions import Branch, SessionStore
    from ikigai_core.toolset import Toolset

PROMPT_SHOWN = 50
"""Characters of a conversation's first prompt ``sessions list`` shows."""


def store_of(app: App) -> SessionStore:
    """The invocation's session log, ``$IKIGAI_HOME/sessions.db``."""
    from ikigai_core.sessions import DB_NAME, SessionStore

    return SessionStore(app.home / DB_NAME)


class Recorder:
    """Writes each answered prompt of one conversation to the session log.

    :param app: the invocation (its home holds the log).
    :param command: ``ask`` or ``chat``, recorded with the conversation.
    :param enabled: ``False`` with ``--no-log`` or ``log: false``: nothing is written.
    """

    def __init__(self, app: App, command: str, *, enabled: bool) -> None:
        from ikigai_core.sessions import new_session_id

        self.app = app
        self.command = command
        self.enabled = enabled
        self.session_id = new_session_id()
        self.parent: int | None = None
        """The recorded turn the next one goes on from (``None``: the conversation's first)."""

    @property
    def session(self) -> str | None:
        """The id this conversation is recorded under, or ``None`` when nothing is recorded."""
        return self.session_id if self.enabled else None

    def resume(self, provider: str, toolset: Toolset, *, session: str | None,
               last: bool) -> Conversation | None:
        """The conversation ``session`` (an id or its start), or with ``last`` the last one
        in this directory, to go on with (recorded under its id, from its latest turn);
        ``None`` when neither. The skills it had loaded are loaded into ``toolset`` again."""
        if session is None and not last:
            return None
        store = store_of(self.app)
        found = store.resolve(session) if session is not None else store.last_in(self.app.cwd)
        if found is None:
            raise UsageError("no earlier conversation in this directory; "
                             "`ikigai sessions list` shows them all")
        branch = store.branch(found, provider)
        self.session_id, self.parent = found, branch.last
        return self._with_skills(branch, toolset)

    def _with_skills(self, branch: Branch, toolset: Toolset) -> Conversation:
        """``branch``'s conversation with its skills loaded in ``toolset`` (their text is in
        it already: its system prompt, or a ``load_skill`` result), then those of
        ``--skill`` (their text added to the system prompt)."""
        from ikigai_core.prompt import with_skill

        conversation, given = branch.conversation, list(toolset.loaded)
        toolset.unload()
        for name in branch.skills:
            if name in toolset.skills:
                toolset.load(name)
            else:
                warn(f"skill '{name}' of session {self.session_id} is not available now; "
                     "its tools are not sent")
        for name in given:
            if name not in toolset.loaded:
                conversation.system = with_skill(conversation.system, toolset.load(name))
        return conversation

    def record(self, agent: Agent, conversation: Conversation, mark: int, prompt: str) -> None:
        """Record the prompt that added ``conversation.messages[mark:]``; a log that cannot
        be written is said once, and the chat goes on unrecorded."""
        if not self.enabled:
            return
        from ikigai_core.sessions import Turn

        advertised = {tool.name: tool for tool in agent.toolset.tools(agent.registry)}
        turn = Turn(prompt, agent.provider.name, agent.model, conversation.messages[mark:],
                    advertised, tuple(agent.toolset.loaded))
        try:
            self.parent = store_of(self.app).add_turn(
                self.session_id, turn, command=self.command, cwd=self.app.cwd,
                system=conversation.system, parent=self.parent)
        except IkigaiError as exc:
            warn(f"{exc}; this conversation is not recorded")
            self.enabled = False

    def restart(self) -> None:
        """Record what follows as a new conversation (``/clear``)."""
        from ikigai_core.sessions import new_session_id

        self.session_id, self.parent = new_session_id(), None


@click.group("sessions")
def sessions() -> None:
    """The recorded conversations of ask and chat ($IKIGAI_HOME/sessions.db)."""


@sessions.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def list_sessions(app: App, as_json: bool) -> None:
    """Every conversation, the most recent first: id, time, model, turns, tokens, first prompt."""
    found = store_of(app).sessions()
    if as_json:
        echo_json([{"id": s.id, "created": s.created, "updated": s.updated, "cwd": s.cwd,
                    "command": s.command, "model": s.model, "first_prompt": s.first_prompt,
                    "turns": s.turns, "input_tokens": s.input_tokens,
                    "output_tokens": s.output_tokens} for s in found])
        return
    for s in found:
        prompt = printable(s.first_prompt or "?", keep_newlines=False)
        if len(prompt) > PROMPT_SHOWN:
            prompt = prompt[: PROMPT_SHOWN - 1] + "…"
        tokens = s.input_tokens + s.output_tokens
        turns = "1 turn" if s.turns == 1 else f"{s.turns} turns"
        click.echo(printable(f"{s.id}  {_when(s.updated)}  {s.model or '?'}  {turns}  "
                             f"{tokens} tokens  {prompt}"))


def _when(stamp: float | None) -> str:
    """A time as ``sessions`` shows it; ``?`` for none (a damaged row)."""
    if stamp is None:
        return "?"
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))
    except (OverflowError, OSError, ValueError):  # a damaged row's time beyond the calendar
        return "?"


@sessions.command("show")
@click.argument("session_id", metavar="ID")
@click.option("--json", "form", flag_value="json", help="Everything recorded, as JSON.")
@click.option("--markdown", "form", flag_value="markdown", default=True,
              help="A readable transcript (the default).")
@pass_app
def show_session(app: App, session_id: str, form: str) -> None:
    """One conversation: its messages, tool calls and tokens (ID may be the start of an id)."""
    store = store_of(app)
    data = store.show(store.resolve(session_id))
    if form == "json":
        echo_json(data)
    else:
        click.echo(printable(transcript(data)), nl=False)


def transcript(data: Mapping[str, Any]) -> str:
    """A conversation as markdown: each prompt, the model's answers, each tool call."""
    lines = [f"# Session {data['id']}", "",
             f"{data['command']} in `{data['cwd']}`, {_when(data['created'])}", ""]
    if data["system"]:
        lines += ["## System prompt", "", data["system"], ""]
    for turn in data["turns"]:
        tokens = turn["input_tokens"] + turn["output_tokens"]
        parent = turn["parent"]
        after = ("" if parent is None or parent == turn["seq"] - 1
                 else f", going on from prompt {parent + 1}")
        lines += [f"## Prompt {turn['seq'] + 1} ({turn['provider']} {turn['model']}, "
                  f"{tokens} tokens{after})", "", turn["prompt"], ""]
        for message in turn["messages"]:
            if message["role"] == "assistant" and message["text"]:
                lines += ["**Assistant:**", "", message["text"], ""]
            elif message["role"] == "tool":
                for result in message["results"]:
                    call = result["call"]
                    lines += [f"**Tool `{call['name']}`** ({result.get('duration', 0.0):.2f} s)",
                              "", "```json", json.dumps(call["arguments"], ensure_ascii=False),
                              json.dumps(result["envelope"], ensure_ascii=False), "```", ""]
    return "\n".join(lines)


@sessions.command("rm")
@click.argument("session_id", metavar="ID")
@pass_app
def remove_session(app: App, session_id: str) -> None:
    """Delete one conversation (ID may be the start of an id)."""
    store = store_of(app)
    found = store.resolve(session_id)
    store.remove(found)
    click.echo(f"Removed session {found}.")
