"""Chat's slash commands for the context window: ``/compact [INSTRUCTIONS]``,
``/uncompact`` and ``/context``; and the line a front end shows for a compaction.

Entries for the chat's command table (:data:`COMMANDS`, with their lines for ``/help``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ikigai_core.commands.chat_table import ChatCommand
from ikigai_core.commands.output import printable

if TYPE_CHECKING:
    from ikigai_core.commands.chat_session import ChatSession
    from ikigai_core.context import Breakdown
    from ikigai_core.conversation import Compaction

WINDOW_SOURCES = {"setting": "the context_window setting", "listing": "the provider's listing",
                  "known": "the provider plugin", "genai-prices": "genai-prices' table"}
"""How ``/context`` names where a window came from."""
REASONS = {"auto": "the window was filling up", "command": "/compact",
           "overflow": "the provider said the context was too long"}


def compaction_line(compaction: Compaction) -> str:
    """``compacted: 42 messages summarised, 31,200 → 4,100 tokens (/compact);
    /uncompact undoes it`` (what a front end shows)."""
    if compaction.summary is None:
        return "uncompacted: the model is sent the whole conversation again"
    before, after = compaction.tokens
    return (f"compacted: {compaction.covers} messages summarised, {before:,} → {after:,} "
            f"tokens ({REASONS.get(compaction.reason, compaction.reason)}); "
            "/uncompact undoes it")


def compact(chat: ChatSession, argument: str) -> None:
    """``/compact [INSTRUCTIONS]``: summarise the older part of the conversation now."""
    chat.tools()
    if chat.session.compact(argument) is None:
        click.echo("Nothing to compact: the conversation is all kept verbatim.")


def uncompact(chat: ChatSession, argument: str) -> None:
    """``/uncompact``: send the whole conversation again."""
    if chat.session.uncompact() is None:
        click.echo("The conversation is not compacted.")
    else:
        click.echo(compaction_line(chat.conversation.compactions[-1]))


def context(chat: ChatSession, argument: str) -> None:
    """``/context``: where the next request's tokens go, in tokens and % of the window."""
    chat.tools()
    click.echo(printable(context_text(chat.session.context(), chat)))


def context_text(parts: Breakdown, chat: ChatSession) -> str:
    """The lines ``/context`` prints."""
    from ikigai_core.context import current

    window, settings = parts.window.tokens, chat.app.settings

    def share(tokens: int) -> str:
        return f"{100 * tokens / window:5.1f}%" if window else "     –"

    if window is None:
        head = (f"Context: {parts.total:,} tokens of an unknown window "
                "(set context_window to compact before the provider refuses)")
    else:
        source = WINDOW_SOURCES.get(parts.window.source or "", "")
        head = (f"Context: {parts.total:,} of {window:,} tokens ({share(parts.total).strip()})"
                f", the window from {source}")
    rows = [("system prompt", parts.system), ("tools", parts.tools), ("skills", parts.skills),
            ("messages", parts.messages), ("tool results", parts.results)]
    lines = [head, *(f"  {name:<14}{tokens:>10,}  {share(tokens)}" for name, tokens in rows)]
    compaction = current(chat.conversation)
    if compaction is not None:
        lines.append(f"Compacted: the first {compaction.covers} messages are sent as a "
                     "summary; /uncompact sends them again.")
    at = f" ({settings.compact_at * window:,.0f} tokens)" if window else ""
    lines.append(f"Compacts at {settings.compact_at:.0%} of the window{at}; tool results "
                 f"are pruned after {settings.prune_after} model turns.")
    return "\n".join(lines)


COMMANDS = (
    ChatCommand("/compact", "/compact [INSTRUCTIONS]", compact,
                (("/compact [TEXT]", "summarise the older conversation (TEXT: what to keep)"),)),
    ChatCommand("/uncompact", "/uncompact", uncompact,
                (("/uncompact", "send the whole conversation again"),)),
    ChatCommand("/context", "/context", context,
                (("/context", "where the context window's tokens go"),)),
)
