"""The PostgreSQL session store: the same three tables as SQLite's (docs/sessions.md),
through psycopg 3.

Each operation opens a connection (in autocommit) and runs its writes in one
transaction, so a killed process leaves no half of a turn. Two writers to one
conversation are serialised by the row lock of its ``sessions`` row (``add_turn`` updates
it first); the schema is created and migrated under an advisory lock, so a hundred
processes starting at once on an empty database migrate it once. Search is PostgreSQL's
full text search with the ``simple`` configuration (words as written, no stemming, as
SQLite's FTS5 ``unicode61``) over the messages' text and the tool calls', kept in each
turn's ``search_text`` with a GIN index; the snippet is ``ts_headline``'s.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import psycopg

from ikigai_core.errors import IkigaiError, UsageError
from ikigai_core.sessions import (
    MARK,
    SCHEMA_VERSION,
    SNIPPET_WORDS,
    Match,
    StoreKind,
    redact,
    search_words,
)
from ikigai_core.sql_store import SqlStore, summaries_query
from ikigai_toolkit.jsonio import strings

CONNECT_TIMEOUT = 10
"""Seconds to wait for the server to answer a connection."""
LOCK_KEY = 0x696B69676169
"""The advisory lock held while the schema is checked and migrated ("ikigai")."""

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        created DOUBLE PRECISION NOT NULL,
        updated DOUBLE PRECISION NOT NULL,
        cwd TEXT NOT NULL,
        command TEXT NOT NULL,
        system TEXT,
        n BIGINT GENERATED ALWAYS AS IDENTITY
    );
    CREATE INDEX sessions_by_cwd ON sessions (cwd, updated);
    CREATE TABLE turns (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        created DOUBLE PRECISION NOT NULL,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        prompt TEXT NOT NULL,
        input_tokens BIGINT NOT NULL,
        output_tokens BIGINT NOT NULL,
        messages TEXT NOT NULL,
        tools TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    CREATE TABLE tool_calls (
        session_id TEXT NOT NULL,
        turn BIGINT NOT NULL,
        seq BIGINT NOT NULL,
        call_id TEXT,
        name TEXT NOT NULL,
        arguments TEXT,
        envelope TEXT NOT NULL,
        duration DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (session_id, turn, seq),
        FOREIGN KEY (session_id, turn) REFERENCES turns (session_id, seq) ON DELETE CASCADE
    )
    """,
    """
    ALTER TABLE turns ADD COLUMN parent BIGINT;
    ALTER TABLE turns ADD COLUMN skills TEXT NOT NULL DEFAULT '[]'
    """,
    """
    ALTER TABLE turns ADD COLUMN search_text TEXT NOT NULL DEFAULT '';
    CREATE INDEX turns_search ON turns USING gin (to_tsvector('simple', search_text))
    """,
    """
    ALTER TABLE turns ADD COLUMN cache_read_tokens BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE turns ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE turns ADD COLUMN cost DOUBLE PRECISION;
    ALTER TABLE sessions ADD COLUMN parent TEXT;
    ALTER TABLE sessions ADD COLUMN fork_turn BIGINT;
    ALTER TABLE sessions ADD COLUMN agent TEXT;
    ALTER TABLE sessions ADD COLUMN status TEXT
    """,
)
"""``MIGRATIONS[n]`` takes the schema from version ``n`` to ``n + 1``, as SQLite's do
(schema 3 is the search text and its index); append only."""
assert len(MIGRATIONS) == SCHEMA_VERSION


def search_text(messages: str) -> str:
    """What search finds a turn by, from its ``messages`` JSON: each message's own text,
    then every string in its tool calls' names, arguments and results."""
    try:
        data = json.loads(messages)
    except ValueError:
        return ""
    own = [m["text"] for m in data if isinstance(m, dict) and isinstance(m.get("text"), str)]
    tools = [text for m in data if isinstance(m, dict) for text in strings(m.get("results"))]
    return "\n".join(own + tools)


class PostgresStore(SqlStore):
    """The session log in the PostgreSQL database at ``url`` (created on first use).

    :param url: a ``postgresql://`` URL (libpq's: user, password, host, port, database,
        parameters).
    """

    ORDER = "n"
    SUMMARIES = summaries_query(
        lambda column: f"COALESCE(SUM(t.{column}), 0)",
        "CASE WHEN COUNT(t.seq) = COUNT(t.cost) THEN COALESCE(SUM(t.cost), 0) END", "n")
    IDS = 'created, id COLLATE "C"'

    def __init__(self, url: str) -> None:
        self.url = url
        self.name = redact(url)
        self._secrets = _secrets_of(url)
        self._migrated = False

    def _sql(self, statement: str) -> str:
        return statement.replace("?", "%s")

    @contextmanager
    def _connect(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            with psycopg.connect(self.url, autocommit=True,
                                 connect_timeout=CONNECT_TIMEOUT) as db:
                if not self._migrated:
                    self._migrate(db)
                    self._migrated = True
                yield db
        except psycopg.Error as exc:
            raise IkigaiError(f"session store {self.name}: {self._scrub(exc)}; check the "
                              "server and sessions_url, or pass --no-log") from None

    @staticmethod
    @contextmanager
    def _transaction(db: psycopg.Connection[Any]) -> Iterator[None]:
        with db.transaction():
            yield

    def _scrub(self, exc: Exception) -> str:
        """The error on one line, with no secret of the URL in it."""
        text = " ".join(str(exc).split()) or type(exc).__name__
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _migrate(self, db: psycopg.Connection[Any]) -> None:
        with db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            db.execute("CREATE TABLE IF NOT EXISTS ikigai_schema (version INTEGER NOT NULL)")
            row = db.execute("SELECT version FROM ikigai_schema").fetchone()
            version = 0 if row is None else row[0]
            if row is None:
                db.execute("INSERT INTO ikigai_schema VALUES (0)")
            if version > SCHEMA_VERSION:
                raise IkigaiError(
                    f"session store {self.name} was written by a newer ikigai (schema "
                    f"{version}, this one knows {SCHEMA_VERSION}); upgrade ikigai, or pass "
                    "--no-log")
            for step in MIGRATIONS[version:]:
                for statement in step.split(";"):
                    if statement.strip():
                        db.execute(statement)
            db.execute("UPDATE ikigai_schema SET version = %s", (SCHEMA_VERSION,))

    def _insert_turns(self, db: Any, turns: Sequence[Mapping[str, Any]]) -> None:
        self._insert(db, "turns", [{**turn, "search_text": search_text(turn["messages"])}
                                   for turn in turns])

    def search(self, text: str, *, limit: int) -> list[Match]:
        words = " ".join(search_words(text))
        options = (f'StartSel="{MARK}", StopSel="{MARK}", MaxWords={SNIPPET_WORDS}, '
                   "MinWords=4, ShortWord=0")
        with self._connect() as db:
            rows = db.execute(
                "SELECT t.session_id, t.seq, t.created, ts_headline('simple', t.search_text, "
                "q, %s) FROM turns t, plainto_tsquery('simple', %s) q "
                "WHERE to_tsvector('simple', t.search_text) @@ q "
                "ORDER BY ts_rank(to_tsvector('simple', t.search_text), q) DESC, "
                "t.created DESC LIMIT %s", (options, words, limit)).fetchall()
        return [Match(row[0], row[1], row[2], row[3]) for row in rows]


def _secrets_of(url: str) -> list[str]:
    """The password of ``url`` as written and decoded (longest first), to keep out of
    every message."""
    try:
        password = urlsplit(url).password
    except ValueError:
        return []
    if not password:
        return []
    return sorted({password, unquote(password)}, key=len, reverse=True)


def open_postgres(url: str, home: Path) -> PostgresStore:
    """The store of a ``postgresql://`` URL (libpq checks the rest when it connects)."""
    try:
        psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error:
        raise UsageError(f"sessions_url '{redact(url)}' is not a PostgreSQL URL libpq "
                         "understands; see docs/sessions.md") from None
    return PostgresStore(url)


POSTGRES = StoreKind(("postgresql", "postgres"), open_postgres)
"""The PostgreSQL store, given by :mod:`ikigai_store_postgres.plugin`."""
