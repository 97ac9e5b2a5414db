"""The storage tests run once per store: SQLite, and PostgreSQL on a real server started
once per test session (skipped, with the reason, where none can start)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ikigai_core.notices import Notices
from ikigai_core.plugins import get_plugin_manager
from ikigai_core.sessions import SessionStore, open_store
from tests.support.postgres import PostgresServer, skip_reason


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the whole test session."""
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    server = PostgresServer()
    try:
        server.start()
    except (OSError, RuntimeError, KeyError) as exc:  # KeyError: no user nobody
        server.stop()
        pytest.skip(f"PostgreSQL could not start here: {exc}")
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, isolated_home, monkeypatch) -> str:
    """A new, empty store of each kind, set as ``IKIGAI_SESSIONS_URL``."""
    if request.param == "sqlite":
        url = f"sqlite:///{isolated_home / 'log.db'}"
    else:
        url = request.getfixturevalue("postgres").database()
    monkeypatch.setenv("IKIGAI_SESSIONS_URL", url)
    return url


def store_at(url: str, home) -> SessionStore:
    """The store ``url`` names, as ikigai opens it."""
    return open_store(get_plugin_manager(), url, home, Notices())


@pytest.fixture
def store(store_url, isolated_home) -> SessionStore:
    return store_at(store_url, isolated_home)
