"""The system prompt sent to the model: the fragments plugins contribute, the skills index,
and the skills loaded with ``--skill`` or ``/load``."""

from __future__ import annotations

from typing import TYPE_CHECKING

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


def join(*parts: str | None) -> str | None:
    """The non-empty ``parts`` joined by blank lines; ``None`` if there are none."""
    return "\n\n".join(part for part in parts if part) or None
