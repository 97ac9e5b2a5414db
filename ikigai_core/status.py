"""The words plugins add to a terminal chat's status line (``ikigai_status``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ikigai_core.hookcall import collect

if TYPE_CHECKING:
    from ikigai_core.app import App
    from ikigai_core.grants import Grants


def _word_problem(word: object) -> str | None:
    return None if isinstance(word, str) else f"it gave {type(word).__name__}, not a str"


def status_words(app: App, grants: Grants) -> list[str]:
    """Every ``ikigai_status`` word for a chat whose session has ``grants``, in plugin call
    order (empty ones dropped)."""
    return [word.strip() for _, word in collect(
        app.pm, "ikigai_status", app.notices, _word_problem, context=app.context,
        grants=grants) if word.strip()]
