"""The system prompt sent to the model: the fragments plugins contribute."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ikigai_core.hookcall import collect

if TYPE_CHECKING:
    from ikigai_core.app import App


def _fragment_problem(fragment: object) -> str | None:
    return None if isinstance(fragment, str) else (
        f"it gave {type(fragment).__name__}, not a str fragment")


def system_prompt(app: App) -> str | None:
    """Every ``ikigai_system_prompt`` fragment, in call order, joined by blank lines;
    ``None`` when no plugin has anything to say."""
    fragments = [text.strip() for _, text in collect(
        app.pm, "ikigai_system_prompt", app.notices, _fragment_problem, cwd=app.cwd,
        home=app.home) if text.strip()]
    return "\n\n".join(fragments) or None
