"""The plugin: gives the ``postgresql`` session store (psycopg is imported only when one
is opened, never at ikigai's start-up)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ikigai_core.marker import hookimpl

if TYPE_CHECKING:
    from ikigai_core.sessions import StoreKind


@hookimpl
def ikigai_session_stores() -> list[StoreKind]:
    """PostgreSQL, for ``postgresql://`` and ``postgres://`` URLs."""
    from ikigai_store_postgres.store import POSTGRES

    return [POSTGRES]
