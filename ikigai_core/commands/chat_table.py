"""The chat's slash commands: a table every module adding commands registers in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ikigai_core.commands.chat_session import ChatSession


@dataclass(frozen=True)
class ChatCommand:
    """One slash command of the chat.

    :param name: what the user types, slash included (``/model``).
    :param usage: how it is typed, for the list of commands (``/model NAME``).
    :param run: ``run(chat, argument)`` does it; returning ``False`` leaves the chat.
    :param help: ``(usage, what it does)`` lines for ``/help``.
    """

    name: str
    usage: str
    run: Callable[[ChatSession, str], bool | None]
    help: tuple[tuple[str, str], ...]


CHAT_COMMANDS: dict[str, ChatCommand] = {}
"""Every slash command by name, in ``/help`` order; :func:`chat_command` adds to it."""


def chat_command(name: str, usage: str, *help: tuple[str, str]
                 ) -> Callable[[Callable[[ChatSession, str], bool | None]],
                               Callable[[ChatSession, str], bool | None]]:
    """Register the decorated ``run(chat, argument)`` as the slash command ``name``."""
    def register(run: Callable[[ChatSession, str], bool | None]
                 ) -> Callable[[ChatSession, str], bool | None]:
        CHAT_COMMANDS[name] = ChatCommand(name, usage, run, help or ((usage, ""),))
        return run

    return register
