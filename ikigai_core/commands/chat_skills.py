"""Chat's slash commands for skills and toolsets: ``/skill``, ``/load NAME``, ``/toolset``.

Entries for the chat's command table (:data:`COMMANDS`, with their lines for ``/help``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ikigai_core.commands.chat_table import ChatCommand
from ikigai_core.commands.output import printable
from ikigai_core.commands.skills import skill_lines
from ikigai_core.errors import UsageError

if TYPE_CHECKING:
    from ikigai_core.commands.chat_session import ChatSession


def list_skills(chat: ChatSession, argument: str) -> None:
    """``/skill``: every skill the model or ``/load`` can load."""
    skills = chat.agent.toolset.skills
    click.echo("Skills:" if skills else "No skills installed.")
    for line in skill_lines(skills.values()):
        click.echo(f"  {line}")


def load_skill(chat: ChatSession, argument: str) -> None:
    """``/load NAME``: the skill's tools join the set, its instructions the conversation
    (:meth:`~ikigai_core.session.Session.load_skill`)."""
    if not argument:
        raise UsageError("/load needs a skill name; /skill lists them")
    toolset = chat.agent.toolset
    if argument in toolset.loaded:
        click.echo(printable(f"Skill {argument} is loaded already."))
        return
    skill = chat.session.load_skill(argument)
    click.echo(printable(f"Skill {skill.name} loaded."))
    click.echo(printable(toolset.describe(chat.tools())))


def toolset(chat: ChatSession, argument: str) -> None:
    """``/toolset``: show the tools sent; with names (or ``all``, ``none``), change them."""
    registry = chat.tools()
    if argument:
        chat.agent.toolset.choose(argument, registry)
    click.echo(printable(chat.agent.toolset.describe(registry)))


COMMANDS = (
    ChatCommand("/skill", "/skill", list_skills, (("/skill", "list the skills"),)),
    ChatCommand("/load", "/load", load_skill,
                (("/load NAME", "load a skill: its instructions, and the tools it brings"),)),
    ChatCommand("/toolset", "/toolset", toolset,
                (("/toolset", "show the tools sent; /toolset a,b (or all, none) changes them"),)),
)
