"""What the model is told besides the conversation: the system prompt (the fragments
plugins contribute, the skills index, the skills loaded before the first prompt, and the
agent definitions when it can fork: :meth:`~ikigai_core.session.Session.tell`), and the
message a skill loaded later is sent as.

A skill loaded once the conversation has begun (``/load NAME``, ``Session.load_skill``,
``--skill`` with ``--continue``) never joins the system prompt: that would change the
prefix the provider cached (the tools, the system prompt, the messages so far) and lose
every cache breakpoint before it. It is a message of its own after the history
(:func:`skill_message`), recorded where it was loaded and sent with the next prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ikigai_core.conversation import UserMessage
from ikigai_core.hookcall import collect

if TYPE_CHECKING:
    from ikigai_core.app import App
    from ikigai_core.skills import Skill


def _fragment_problem(fragment: object) -> str | None:
    return None if isinstance(fragment, str) else (
        f"it gave {type(fragment).__name__}, not a str fragment")


def system_prompt(app: App) -> str | None:
    """Every ``ikigai_system_prompt`` fragment, in call order, then the skills index,
    joined by blank lines; ``None`` when there is nothing to say."""
    fragments = [text.strip() for _, text in collect(
        app.pm, "ikigai_system_prompt", app.notices, _fragment_problem, cwd=app.cwd,
        home=app.home, settings=app.settings) if text.strip()]
    return join(*fragments, app.skills.index())


def with_skill(system: str | None, skill: Skill) -> str:
    """``system`` with the instructions of ``skill`` (loaded by the user) added at its end."""
    return join(system, f"## Skill: {skill.name} (in {skill.path.parent})\n\n{skill.body}") or ""


def skill_message(skill: Skill) -> UserMessage:
    """The message carrying the instructions of ``skill``, which the user loaded once the
    conversation had begun: marked as the user's loading of it, its section as the
    system prompt would hold it (:func:`with_skill`), and where it ends."""
    return UserMessage(
        f"[The user loaded the skill {skill.name}: apply its instructions from here on.]"
        f"\n\n{with_skill(None, skill)}\n\n[End of the skill {skill.name}.]",
        skill=skill.name)


def with_section(system: str | None, section: str | None) -> str | None:
    """``system`` ending with ``section`` (a paragraph: no blank line in it), unless it
    holds it already or ``section`` is ``None``."""
    if section is None or system is not None and section in system.split("\n\n"):
        return system
    return join(system, section)


def without_section(system: str | None, section: str | None) -> str | None:
    """``system`` without the paragraph ``section`` (:func:`with_section` put it there)."""
    if system is None or section is None:
        return system
    return "\n\n".join(part for part in system.split("\n\n") if part != section) or None


def join(*parts: str | None) -> str | None:
    """The non-empty ``parts`` joined by blank lines; ``None`` if there are none."""
    return "\n\n".join(part for part in parts if part) or None
