"""``ikigai sessions list|search|show|rm``: the conversations :class:`~ikigai_core.session.Session`
recorded."""

from __future__ import annotations

import json
import re
import textwrap
import time
from collections.abc import Collection, Iterator, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ikigai_core.commands.output import echo_json, printable, warn
from ikigai_core.commands.session_tree import Tree, tree_json, tree_lines
from ikigai_core.commands.spend import tokens_words
from ikigai_core.commands.tools import pass_app
from ikigai_core.errors import UsageError
from ikigai_core.session import store_of

if TYPE_CHECKING:
    from ikigai_core.app import App
    from ikigai_core.sessions import SessionSummary

PROMPT_SHOWN = 50
"""Characters of a conversation's first prompt ``sessions list`` shows."""


@click.group("sessions")
def sessions() -> None:
    """The recorded conversations of ask and chat (the sessions_url store).

    SQLite at $IKIGAI_HOME/sessions.db unless sessions_url names another (docs/sessions.md).
    """


@sessions.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def list_sessions(app: App, as_json: bool) -> None:
    """Every conversation, the most recent first: id, time, model, turns, tokens (its
    sub-agents' included), first prompt (with --json every sub-agent's too, with its parent,
    agent, status, cache tokens, cost, and ``rolled_up``: the totals with its sub-agents)."""
    found = store_of(app).sessions()
    tree = Tree(found)
    if as_json:
        echo_json([{**asdict(s), "rolled_up": tree.rolled_up(s)} for s in found])
        return
    for s in tree.roots():
        click.echo(summary_line(s, tree))


def summary_line(s: SessionSummary, tree: Tree) -> str:
    """One conversation as ``sessions list`` and chat's ``/sessions`` show it: id, time,
    model, turns, tokens (its sub-agents' included, and how many there were; the prompt
    cache's share, the cost) and the start of its first prompt, on one printable line."""
    prompt = printable(s.first_prompt or "?", keep_newlines=False)
    if len(prompt) > PROMPT_SHOWN:
        prompt = prompt[: PROMPT_SHOWN - 1] + "…"
    rolled = tree.rolled_up(s)
    agents = rolled["agents"]
    with_agents = "" if not agents else f" (with {agents} sub-agent{'s' * (agents > 1)})"
    tokens = tokens_words({**asdict(s), **rolled})
    turns = "1 turn" if s.turns == 1 else f"{s.turns} turns"
    return printable(f"{s.id}  {_when(s.updated)}  {s.model or '?'}  {turns}  "
                     f"{tokens}{with_agents}  {prompt}")


def _when(stamp: float | None) -> str:
    """A time as ``sessions`` shows it; ``?`` for none (a damaged row)."""
    if stamp is None:
        return "?"
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))
    except (OverflowError, OSError, ValueError):  # a damaged row's time beyond the calendar
        return "?"


@sessions.command("search")
@click.argument("text")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True,
              metavar="N", help="Show at most N matches.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def search_sessions(app: App, text: str, limit: int, as_json: bool) -> None:
    """The prompts whose messages or tool calls hold every word of TEXT, the best match
    first: session id, time, prompt number, and the words around the match (**marked**)."""
    found = store_of(app).search(text, limit=limit)
    if as_json:
        echo_json([{"session": m.session, "turn": m.turn, "created": m.created,
                    "snippet": m.snippet} for m in found])
        return
    if not found:
        warn(f"nothing recorded matches '{text}'")
    for m in found:
        prompt = "?" if m.turn is None else m.turn + 1
        click.echo(printable(f"{m.session}  {_when(m.created)}  prompt {prompt}  "
                             f"{' '.join(m.snippet.split())}"))


@sessions.command("show")
@click.argument("session_id", metavar="ID")
@click.option("--json", "form", flag_value="json", help="Everything recorded, as JSON.")
@click.option("--markdown", "form", flag_value="markdown",
              help="A markdown transcript: a heading per prompt, tool calls and results "
                   "in fenced blocks.")
@click.option("--plain", "form", flag_value="plain", default=True,
              help="A plain text transcript (the default).")
@click.option("--full", is_flag=True,
              help="Every message, also those a compaction summarised (JSON always has all).")
@pass_app
def show_session(app: App, session_id: str, form: str, full: bool) -> None:
    """One conversation: its messages, tool calls and tokens (ID may be the start of an id).
    The messages a compaction summarised are left out unless --full."""
    store = store_of(app)
    data = store.show(store.resolve(session_id))
    tree = Tree(store.sessions())
    if form == "json":
        echo_json({**data, "agents": tree_json(tree, data["id"])})
        return
    form_of = transcript if form == "markdown" else plain_transcript
    click.echo(printable(form_of(data, full=full)), nl=False)
    lines = tree_lines(tree, data["id"], markdown=form == "markdown")
    if lines:
        click.echo(printable("\n".join(["", *lines])))


def transcript(data: Mapping[str, Any], *, full: bool = True) -> str:
    """A conversation as markdown: a heading per prompt (quoted), the model's text as it
    wrote it, each tool call and its result in a fenced block (a shell command as ``sh``,
    the rest as JSON)."""
    lines = [f"# Session {data['id']}", "",
             f"{data['command']} in `{data['cwd']}`, {_when(data['created'])}", ""]
    if data["system"]:
        lines += ["## System prompt", "", *_fenced(data["system"], "markdown"), ""]
    hidden = () if full else _summarised(data)
    for turn in data["turns"]:
        lines += [f"## Prompt {_title(turn)}", "",
                  *(f"> {line}".rstrip() for line in turn["prompt"].split("\n")), ""]
        for text, result in _steps(turn, hidden):
            if result is None:
                lines += [text, ""]
                continue
            call = result["call"]
            command = _shell_command(call["arguments"])
            lines += [f"Tool call `{call['name']}` ({result.get('duration', 0.0):.2f} s):", "",
                      *(_fenced(command, "sh") if command is not None
                        else _fenced(_pretty(call["arguments"]), "json")), "",
                      "Result:", "", *_fenced(_pretty(result["envelope"]), "json"), ""]
    return "\n".join(lines)


def plain_transcript(data: Mapping[str, Any], *, full: bool = True) -> str:
    """A conversation as plain text: each prompt under a line naming it (indented), each
    tool call and its result on a line each, the model's text as it wrote it; without
    ``full``, the messages the compaction in force summarised left out."""
    lines = [f"Session {data['id']}: {data['command']} in {data['cwd']}, "
             f"{_when(data['created'])}", ""]
    if data["system"]:
        lines += ["System prompt:", textwrap.indent(data["system"], "    "), ""]
    hidden = () if full else _summarised(data)
    for turn in data["turns"]:
        lines += [f"Prompt {_title(turn)}:", textwrap.indent(turn["prompt"], "    "), ""]
        for text, result in _steps(turn, hidden):
            if result is None:
                lines += [text, ""]
                continue
            call = result["call"]
            lines += [f"Tool {call['name']} ({result.get('duration', 0.0):.2f} s): "
                      f"{json.dumps(call['arguments'], ensure_ascii=False)}",
                      f"  → {json.dumps(result['envelope'], ensure_ascii=False)}", ""]
    return "\n".join(lines)


def _title(turn: Mapping[str, Any]) -> str:
    """``3 (openai gpt-4o, 15 tokens, $0.0001, going on from prompt 1)``: a prompt's
    number, model, tokens and cost, and the prompt it went on from when not the one
    before."""
    parent = turn["parent"]
    after = ("" if parent is None or parent == turn["seq"] - 1
             else f", going on from prompt {parent + 1}")
    return (f"{turn['seq'] + 1} ({turn['provider']} {turn['model']}, "
            f"{tokens_words(turn, ', ')}{after})")


def _summarised(data: Mapping[str, Any]) -> set[tuple[int, int]]:
    """``(turn, index)`` of each message the compaction in force summarised (in the order
    the turns were recorded)."""
    order: list[tuple[int, int]] = []
    covers = 0
    for turn in data["turns"]:
        for index, message in enumerate(turn["messages"]):
            if message["role"] != "compaction":
                order.append((turn["seq"], index))
            elif message["text"] is None:
                covers = 0
            else:
                covers = message["covers"]
    return set(order[:covers])


def _compaction_text(message: Mapping[str, Any]) -> str:
    """A compaction as a transcript shows it: what it did, and its summary."""
    if message["text"] is None:
        return "[Uncompacted: the model is sent every message again]"
    before, after = message["tokens"]
    return (f"[Compacted ({message['reason']}): the first {message['covers']} messages "
            f"summarised, {before:,} → {after:,} tokens]\n"
            + textwrap.indent(message["text"], "    "))


def _steps(turn: Mapping[str, Any], hidden: Collection[tuple[int, int]]
           ) -> Iterator[tuple[str, Mapping[str, Any] | None]]:
    """What a prompt led to, in order: ``(text, None)`` for the model's text and each
    compaction, ``("", result)`` for each tool call with its result; the messages in
    ``hidden`` as one line saying they were summarised."""
    left_out = 0
    for index, message in enumerate(turn["messages"]):
        if (turn["seq"], index) in hidden:
            left_out += 1
            continue
        if left_out:
            yield f"[{left_out} messages summarised by a compaction; --full shows them]", None
            left_out = 0
        if message["role"] == "compaction":
            yield _compaction_text(message), None
        elif message["role"] == "assistant" and message["text"]:
            yield message["text"], None
        elif message["role"] == "tool":
            for result in message["results"]:
                yield "", result
    if left_out:
        yield f"[{left_out} messages summarised by a compaction; --full shows them]", None


def _shell_command(arguments: Any) -> str | None:
    """The command of a call whose only argument is a ``command`` string (a shell's)."""
    if isinstance(arguments, dict) and set(arguments) == {"command"}:
        command = arguments["command"]
        return command if isinstance(command, str) else None
    return None


def _pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def _fenced(text: str, language: str) -> list[str]:
    """``text`` in a fenced block of ``language``, its fence longer than any run of
    backticks in it."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + language, text, fence]


@sessions.command("rm")
@click.argument("session_id", metavar="ID")
@pass_app
def remove_session(app: App, session_id: str) -> None:
    """Delete one conversation (ID may be the start of an id)."""
    store = store_of(app)
    found = store.resolve(session_id)
    store.remove(found)
    click.echo(f"Removed session {found}.")


@sessions.command("export")
@click.option("--to", "target", type=click.Path(dir_okay=False, writable=True),
              metavar="FILE", help="Write to FILE (replaced whole, or left as it was) "
                                   "instead of standard output.")
@pass_app
def export_sessions(app: App, target: str | None) -> None:
    """Every conversation as JSON lines, one per conversation, the oldest first: what
    `sessions import` reads into another store (docs/sessions.md)."""
    from ikigai_core.session_transfer import export_lines
    from ikigai_core.statefiles import write_private

    lines = export_lines(store_of(app))
    if target is None:
        for line in lines:
            click.echo(line)
        return
    write_private(Path(target), (line + "\n" for line in lines))


@sessions.command("import")
@click.argument("source", metavar="FILE", type=click.Path(exists=True, dir_okay=False))
@pass_app
def import_sessions(app: App, source: str) -> None:
    """Record the conversations of FILE (written by `sessions export`) in this store; a
    conversation whose id is here already is left as it is. Every line is checked
    before anything is written."""
    from ikigai_core.session_transfer import import_rows, read_lines

    try:
        text = Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {source}: {exc}") from None
    imported, there = import_rows(store_of(app), read_lines(text.splitlines(), source))
    click.echo(f"Imported {imported} sessions" + (f" ({there} already here)." if there else "."))
