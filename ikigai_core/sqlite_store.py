"""The SQLite session store, ikigai's default: ``sqlite:///PATH``, by default
``$IKIGAI_HOME/sessions.db``.

The database is created user-only and is in WAL mode with a busy timeout, so several
ikigai processes can write at once; a writer's transaction is ``BEGIN IMMEDIATE``. It
carries its schema version (``PRAGMA user_version``) and :data:`MIGRATIONS` bring an older
one up to date. The messages' text and the tool calls' arguments and results are in a
full-text index (SQLite's FTS5), kept by triggers as turns come and go (issue 27). A row
damaged with ``sqlite3`` is read as such (:mod:`ikigai_core.session_json`).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ikigai_core.errors import IkigaiError, UsageError
from ikigai_core.session_json import is_number
from ikigai_core.sessions import (
    DB_NAME,
    MARK,
    SCHEMA_VERSION,
    SNIPPET_WORDS,
    Match,
    StoreKind,
    redact,
    search_words,
)
from ikigai_core.sql_store import SqlStore, _or_none, summaries_query
from ikigai_core.statefiles import check_private, ensure_private_dir

BUSY_TIMEOUT = 30.0
"""Seconds a writer waits for another process's transaction to end."""

SEARCH_COLUMNS = (
    # every message's own text: the prompt and the model's answers
    "(SELECT group_concat(atom, char(10)) FROM json_tree(iif(json_valid({0}), {0}, '[]')) "
    "WHERE type = 'text' AND key = 'text' AND path GLOB '$[[]*' AND path NOT GLOB '*.*')",
    # the text in the tool calls' names, arguments and results
    "(SELECT group_concat(atom, char(10)) FROM json_tree(iif(json_valid({0}), {0}, '[]')) "
    "WHERE type = 'text' AND path GLOB '$[[]*].results*')",
)
"""What the full-text index holds of a turn, from its ``messages`` column ``{0}`` (JSON
that is damaged adds nothing)."""


def _indexed(messages: str) -> str:
    return ", ".join(column.format(messages) for column in SEARCH_COLUMNS)


SEARCH_INDEX = (
    "CREATE VIRTUAL TABLE turn_text USING fts5 (text, tools)",
    "CREATE TRIGGER turn_text_add AFTER INSERT ON turns BEGIN "
    f"INSERT INTO turn_text (rowid, text, tools) VALUES (new.rowid, {_indexed('new.messages')});"
    " END",
    "CREATE TRIGGER turn_text_remove AFTER DELETE ON turns BEGIN "
    "DELETE FROM turn_text WHERE rowid = old.rowid; END",
    f"INSERT INTO turn_text (rowid, text, tools) SELECT rowid, {_indexed('messages')} FROM turns",
)
"""The full-text index of the turns, built for those recorded already and kept by triggers."""


def has_fts5() -> bool:
    """Whether this Python's SQLite has FTS5, the full-text search the index needs."""
    with closing(sqlite3.connect(":memory:")) as db:
        return bool(db.execute("SELECT sqlite_compileoption_used('ENABLE_FTS5')").fetchone()[0])


def build_search_index(db: sqlite3.Connection) -> None:
    """Index the turns (schema 3), where this SQLite has FTS5: without it, recording goes on
    and ``sessions search`` says what is missing (it builds the index once it can)."""
    if has_fts5():
        for statement in SEARCH_INDEX:
            db.execute(statement)


MIGRATIONS: tuple[str | Callable[[sqlite3.Connection], None], ...] = (
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        created REAL NOT NULL,
        updated REAL NOT NULL,
        cwd TEXT NOT NULL,
        command TEXT NOT NULL,
        system TEXT
    );
    CREATE INDEX sessions_by_cwd ON sessions (cwd, updated);
    CREATE TABLE turns (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        created REAL NOT NULL,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        prompt TEXT NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        messages TEXT NOT NULL,
        tools TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    CREATE TABLE tool_calls (
        session_id TEXT NOT NULL,
        turn INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        call_id TEXT,
        name TEXT NOT NULL,
        arguments TEXT,
        envelope TEXT NOT NULL,
        duration REAL NOT NULL,
        PRIMARY KEY (session_id, turn, seq),
        FOREIGN KEY (session_id, turn) REFERENCES turns (session_id, seq) ON DELETE CASCADE
    );
    """,
    """
    ALTER TABLE turns ADD COLUMN parent INTEGER;
    UPDATE turns SET parent = seq - 1 WHERE seq > 0;
    ALTER TABLE turns ADD COLUMN skills TEXT NOT NULL DEFAULT '[]';
    """,
    build_search_index,
    """
    ALTER TABLE turns ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE turns ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE turns ADD COLUMN cost REAL;
    ALTER TABLE sessions ADD COLUMN parent TEXT;
    ALTER TABLE sessions ADD COLUMN fork_turn INTEGER;
    ALTER TABLE sessions ADD COLUMN agent TEXT;
    ALTER TABLE sessions ADD COLUMN status TEXT;
    """,
)
"""``MIGRATIONS[n]`` takes a database from schema version ``n`` to ``n + 1`` (SQL, or a
function given the connection); append only."""
assert len(MIGRATIONS) == SCHEMA_VERSION

SQLITE_FULL = 13
"""``sqlite3.SQLITE_FULL`` (named from Python 3.11): the disk is full (issue 21 item 12)."""
SQLITE_BUSY_CODES = (5, 6)
"""``SQLITE_BUSY`` and ``SQLITE_LOCKED``: another process holds the database, worth waiting
for; any other error (a full disk) is not."""


def _total(column: str) -> str:
    return f"TOTAL(iif(typeof(t.{column}) = 'integer', t.{column}, 0))"


class SqliteStore(SqlStore):
    """The session database at ``path`` (created user-only, migrated on first use).

    :param path: the database file, usually ``$IKIGAI_HOME/sessions.db``.
    """

    SUMMARIES = summaries_query(  # a damaged row's count of the wrong type counts 0
        _total, "iif(COUNT(t.seq) = COUNT(iif(typeof(t.cost) IN ('real', 'integer'), 1, "
        "NULL)), TOTAL(t.cost), NULL)", SqlStore.ORDER)

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = f"sqlite:///{path}"
        self._migrated = False

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        if not self.path.exists():
            ensure_private_dir(self.path.parent)
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        check_private(self.path)  # a history others could write is not one to go on with
        try:
            with closing(sqlite3.connect(self.path, timeout=BUSY_TIMEOUT,
                                         isolation_level=None)) as db:
                db.text_factory = _text
                _use_wal(db)
                db.execute("PRAGMA foreign_keys=ON")
                if not self._migrated:
                    migrate(db)
                    self._migrated = True
                yield db
        except sqlite3.Error as exc:
            advice = (f"{exc}; move it away to start a new one"
                      if getattr(exc, "sqlite_errorcode", None) != SQLITE_FULL
                      else "the disk is full; free some space")  # not the file's fault
            raise IkigaiError(f"session log {self.path}: {advice}, or pass --no-log") from exc

    @staticmethod
    @contextmanager
    def _transaction(db: sqlite3.Connection) -> Iterator[None]:
        db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def search(self, text: str, *, limit: int) -> list[Match]:
        query = " ".join('"' + word.replace('"', '""') + '"' for word in search_words(text))
        with self._connect() as db:
            self._ensure_index(db)
            rows = db.execute(f"""
                SELECT t.session_id, t.seq, t.created,
                       snippet(turn_text, -1, '{MARK}', '{MARK}', '…', {SNIPPET_WORDS})
                FROM turn_text JOIN turns t ON t.rowid = turn_text.rowid
                WHERE turn_text MATCH ? ORDER BY rank LIMIT ?""",
                              (query, limit)).fetchall()
        return [Match(str(row[0]), _or_none(row[1], lambda v: isinstance(v, int)),
                      _or_none(row[2], is_number), str(row[3])) for row in rows]

    def _ensure_index(self, db: sqlite3.Connection) -> None:
        """Build the index if a SQLite without FTS5 could not, or say that this one has none."""
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'turn_text'").fetchone():
            return
        if not has_fts5():
            raise IkigaiError(f"sessions search needs SQLite's full-text search (FTS5), which "
                              f"this Python's SQLite {sqlite3.sqlite_version} lacks; run ikigai "
                              "with a Python whose sqlite3 has it")
        with self._transaction(db):
            build_search_index(db)


def _text(data: bytes) -> str:
    """A text column as ``str`` even when a damaged row holds bytes that are not UTF-8
    (each bad byte a surrogate, which the readers refuse or escape)."""
    return data.decode("utf-8", "surrogateescape")


def _use_wal(db: sqlite3.Connection) -> None:
    """Put the database in WAL mode (once: the mode is kept in the file). Switching needs
    the database to itself, and SQLite does not wait for that, so this waits up to
    :data:`BUSY_TIMEOUT` while another process creates it too; any other error (a full
    disk) is raised at once."""
    deadline = time.monotonic() + BUSY_TIMEOUT
    while db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        try:
            db.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError as exc:
            code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
            busy = "locked" in str(exc) if code is None else code & 0xFF in SQLITE_BUSY_CODES
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def migrate(db: sqlite3.Connection) -> None:
    """Bring the database to :data:`SCHEMA_VERSION`, one migration per transaction."""
    while True:
        with SqliteStore._transaction(db):
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise IkigaiError(
                    f"the session log was written by a newer ikigai (schema {version}, this "
                    f"one knows {SCHEMA_VERSION}); upgrade ikigai, or pass --no-log")
            if version == SCHEMA_VERSION:
                return
            step = MIGRATIONS[version]
            if callable(step):
                step(db)
            else:
                for statement in step.split(";"):
                    if statement.strip():
                        db.execute(statement)
            db.execute(f"PRAGMA user_version = {version + 1}")


def open_sqlite(url: str, home: Path) -> SqliteStore:
    """The store of a ``sqlite:///PATH`` URL (``sqlite://`` alone: ``$IKIGAI_HOME``'s)."""
    parts = urlsplit(url)
    if parts.netloc or parts.query or parts.fragment:
        raise UsageError(f"sessions_url '{redact(url)}': a SQLite store is sqlite:///PATH (an "
                         "absolute path after three slashes)")
    path = unquote(parts.path)
    return SqliteStore(Path(path) if path else home / DB_NAME)


SQLITE = StoreKind(("sqlite",), open_sqlite)
"""The SQLite store, given by the default plugin :mod:`ikigai_core.defaults.stores`."""
