"""Default plugin: the SQLite session store (``sqlite:///PATH``; docs/sessions.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ikigai_core.marker import hookimpl

if TYPE_CHECKING:
    from ikigai_core.sessions import StoreKind


@hookimpl
def ikigai_session_stores() -> list[StoreKind]:
    """SQLite, the default store."""
    from ikigai_core.sqlite_store import SQLITE  # not on `ikigai --help`'s path

    return [SQLITE]
