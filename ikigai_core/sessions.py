"""The session log: every ``ask`` and ``chat`` conversation in SQLite, ``$IKIGAI_HOME/sessions.db``.

One row per conversation (``sessions``), one per prompt and everything it led to (``turns``:
the messages, provider, model, token usage, the SHA-256 of each advertised tool's schema,
the skills loaded, the turn it went on from), one per tool call (``tool_calls``: arguments,
envelope, duration). A turn is written in one transaction, so a crash or Ctrl-C never
leaves half of one. Two processes going on with one conversation at once each record
the turn they went on from (its ``parent``): the conversation branches, and going on
follows the branch of the latest turn, so no one is sent an interleaving that never
happened (issue 21). The messages' text and the tool calls' arguments and results are in a
full-text index (SQLite's FTS5), kept by triggers as turns come and go (issue 27). Rows
are read back as if a stranger had edited them (:mod:`ikigai_core.session_json`). The
database is in WAL mode with a busy timeout, so several ikigai processes can write at
once; it carries its schema version (``PRAGMA user_version``) and :data:`MIGRATIONS`
bring an older one up to date.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ikigai_core.conversation import (
    Compaction,
    Conversation,
    Message,
    ToolResultsMessage,
    usage_of,
)
from ikigai_core.errors import IkigaiError, UsageError
from ikigai_core.session_json import (
    STATUSES,
    DamagedSession,
    entry_of,
    is_count,
    is_number,
    is_status,
    is_text,
    message_json,
    read_session,
)
from ikigai_core.statefiles import check_private, ensure_private_dir

if TYPE_CHECKING:
    from ikigai_core.tools import Tool

DB_NAME = "sessions.db"
BUSY_TIMEOUT = 30.0
"""Seconds a writer waits for another process's transaction to end."""

COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
"""The token counts of a turn, summed by ``sessions list``."""

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
SCHEMA_VERSION = len(MIGRATIONS)


def schema_hash(tool: Tool) -> str:
    """SHA-256 of the tool's schema as JSON with sorted keys: what the model was offered."""
    schema = tool.schema or {"name": tool.name, "description": tool.description,
                             "parameters": tool.parameters}
    text = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# -- The store ------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """One prompt and everything it led to, as it is recorded.

    :param prompt: what the user sent.
    :param provider: the provider's name.
    :param model: the model asked.
    :param messages: the messages the prompt added to the conversation (its own first),
        and the compactions made meanwhile.
    :param tools: the tools advertised, by name.
    :param skills: the skills loaded when it ended, in load order.
    :param cache_read_tokens: input tokens the provider read from its prompt cache.
    :param cache_write_tokens: input tokens the provider wrote to its prompt cache.
    :param cost: what the turn cost in US dollars (``None``: unknown).
    """

    prompt: str
    provider: str
    model: str
    messages: Sequence[Message | Compaction]
    tools: Mapping[str, Tool]
    skills: Sequence[str] = ()
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float | None = None


@dataclass(frozen=True)
class Branch:
    """A recorded conversation as it goes on: the turns from its first to its latest.

    :param conversation: their messages, and the system prompt last sent.
    :param last: the latest turn's number, the parent of the next (``None``: no turn).
    :param skills: the skills loaded when the latest turn ended.
    """

    conversation: Conversation
    last: int | None
    skills: tuple[str, ...]


@dataclass(frozen=True)
class SessionSummary:
    """One conversation as ``ikigai sessions list`` shows it; times and texts are ``None``
    where a damaged row holds something else, a token count of the wrong type 0.

    :param cost: the turns' cost in US dollars; ``None`` when any turn's is unknown.
    :param parent: the conversation this one is a sub-agent of, forked from its turn
        ``fork_turn``.
    :param agent: the name of the agent definition a sub-agent runs.
    :param status: a sub-agent's state, one of :data:`STATUSES` (``None``: not a
        sub-agent's).
    """

    id: str
    created: float | None
    updated: float | None
    cwd: str | None
    command: str | None
    model: str | None
    first_prompt: str | None
    turns: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float | None = None
    parent: str | None = None
    fork_turn: int | None = None
    agent: str | None = None
    status: str | None = None


@dataclass(frozen=True)
class Match:
    """One recorded prompt whose text or tool calls match a search.

    :param session: the conversation's id.
    :param turn: the prompt's number in it, from 0.
    :param created: when it was recorded (``None`` where a damaged row holds something else).
    :param snippet: the matching text around the match, each matched word between
        :data:`MARK` s.
    """

    session: str
    turn: int | None
    created: float | None
    snippet: str


MARK = "**"
"""What a search's snippet puts either side of each matched word."""
SNIPPET_WORDS = 16
"""Words a search's snippet shows around the match."""


def search_query(text: str) -> str:
    """``text`` as an FTS5 query: each word as itself (quoted, so no word is an operator),
    all of them needed; no words is a :class:`UsageError`."""
    words = text.split()
    if not words:
        raise UsageError("sessions search needs some text to look for")
    return " ".join('"' + word.replace('"', '""') + '"' for word in words)


def new_session_id() -> str:
    """A fresh conversation id: 12 hex digits."""
    return secrets.token_hex(6)


SQLITE_FULL = 13
"""``sqlite3.SQLITE_FULL`` (named from Python 3.11): the disk is full (issue 21 item 12)."""
SQLITE_BUSY_CODES = (5, 6)
"""``SQLITE_BUSY`` and ``SQLITE_LOCKED``: another process holds the database, worth waiting
for; any other error (a full disk) is not."""


class SessionStore:
    """The session database at ``path`` (created user-only, migrated on first use).

    :param path: the database file, usually ``$IKIGAI_HOME/sessions.db``.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
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

    def new_session(self, session_id: str, *, command: str, cwd: Path, system: str | None,
                    parent: str | None = None, fork_turn: int | None = None,
                    agent: str | None = None, status: str | None = None) -> None:
        """Record conversation ``session_id`` before its first turn: a sub-agent's of
        conversation ``parent`` (forked from its turn ``fork_turn``), running the agent
        definition ``agent``, in state ``status`` (one of :data:`STATUSES`)."""
        _check_status(status)
        now = time.time()
        with self._connect() as db, self._transaction(db):
            db.execute("INSERT INTO sessions (id, created, updated, cwd, command, system, "
                       "parent, fork_turn, agent, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (session_id, now, now, str(cwd), command, system, parent, fork_turn,
                        agent, status))

    def set_status(self, session_id: str, status: str | None) -> None:
        """Set a sub-agent's state (one of :data:`STATUSES`)."""
        _check_status(status)
        with self._connect() as db, self._transaction(db):
            db.execute("UPDATE sessions SET status = ? WHERE id = ?", (status, session_id))

    def add_turn(self, session_id: str, turn: Turn, *, command: str, cwd: Path,
                 system: str | None, parent: int | None = None) -> int:
        """Record ``turn`` in conversation ``session_id`` (created on its first turn unless
        :meth:`new_session` did), in one transaction, as going on from turn ``parent``;
        ``system`` is the system prompt it was sent with. Returns the turn's number."""
        now = time.time()
        usage = usage_of(turn.messages)
        messages = json.dumps([message_json(m) for m in turn.messages], ensure_ascii=False)
        tools = json.dumps({name: schema_hash(tool) for name, tool in turn.tools.items()})
        with self._connect() as db, self._transaction(db):
            db.execute("INSERT OR IGNORE INTO sessions (id, created, updated, cwd, command, "
                       "system) VALUES (?, ?, ?, ?, ?, ?)",
                       (session_id, now, now, str(cwd), command, system))
            db.execute("UPDATE sessions SET updated = ?, system = ? WHERE id = ?",
                       (now, system, session_id))
            seq: int = db.execute("SELECT COUNT(*) FROM turns WHERE session_id = ?",
                                  (session_id,)).fetchone()[0]
            db.execute("INSERT INTO turns (session_id, seq, created, provider, model, prompt, "
                       "input_tokens, output_tokens, messages, tools, parent, skills, "
                       "cache_read_tokens, cache_write_tokens, cost) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (session_id, seq, now, turn.provider, turn.model, turn.prompt,
                        usage.input_tokens, usage.output_tokens, messages, tools, parent,
                        json.dumps(list(turn.skills)), turn.cache_read_tokens,
                        turn.cache_write_tokens, turn.cost))
            results = [r for m in turn.messages if isinstance(m, ToolResultsMessage)
                       for r in m.results]
            db.executemany("INSERT INTO tool_calls VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [
                (session_id, seq, index, r.call.id, r.call.name,
                 json.dumps(r.call.arguments, ensure_ascii=False),
                 json.dumps(r.envelope, ensure_ascii=False), r.duration)
                for index, r in enumerate(results)])
        return seq

    def sessions(self) -> list[SessionSummary]:
        """Every conversation, the most recently used first (a damaged row too: what it
        holds of the wrong type is ``None``, a token count of the wrong type 0)."""
        with self._connect() as db:
            rows = db.execute("""
                SELECT s.id, s.created, s.updated, s.cwd, s.command,
                       (SELECT model FROM turns WHERE session_id = s.id ORDER BY seq DESC),
                       (SELECT prompt FROM turns WHERE session_id = s.id ORDER BY seq),
                       COUNT(t.seq), {}, {}, {}, {},
                       iif(COUNT(t.seq) = COUNT(iif(typeof(t.cost) IN ('real', 'integer'),
                                                    1, NULL)), TOTAL(t.cost), NULL),
                       s.parent, s.fork_turn, s.agent, s.status
                FROM sessions s LEFT JOIN turns t ON t.session_id = s.id
                GROUP BY s.id ORDER BY s.updated DESC, s.rowid DESC""".format(
                    *(f"TOTAL(iif(typeof(t.{column}) = 'integer', t.{column}, 0))"
                      for column in COUNTS))).fetchall()
        return [SessionSummary(
            id=str(row[0]), created=_or_none(row[1], is_number),
            updated=_or_none(row[2], is_number), cwd=_or_none(row[3], is_text),
            command=_or_none(row[4], is_text), model=_or_none(row[5], is_text),
            first_prompt=_or_none(row[6], is_text), turns=row[7], input_tokens=int(row[8]),
            output_tokens=int(row[9]), cache_read_tokens=int(row[10]),
            cache_write_tokens=int(row[11]), cost=_or_none(row[12], is_number),
            parent=_or_none(row[13], is_text), fork_turn=_or_none(row[14], is_count),
            agent=_or_none(row[15], is_text), status=_or_none(row[16], is_status))
            for row in rows]

    def resolve(self, prefix: str) -> str:
        """The id of the one conversation whose id starts with ``prefix``."""
        with self._connect() as db:
            ids = [row[0] for row in db.execute(
                "SELECT id FROM sessions WHERE substr(id, 1, ?) = ?", (len(prefix), prefix))]
        if len(ids) == 1 and prefix:
            return str(ids[0])
        if not ids or not prefix:
            raise UsageError(f"no session '{prefix}'; `ikigai sessions list` shows them")
        raise UsageError(f"'{prefix}' starts {len(ids)} session ids; give more of it")

    def last_in(self, cwd: Path) -> str | None:
        """The conversation most recently used in ``cwd``, if any."""
        with self._connect() as db:
            row = db.execute("SELECT id FROM sessions WHERE cwd = ? "
                             "ORDER BY updated DESC, rowid DESC LIMIT 1", (str(cwd),)).fetchone()
        return None if row is None else str(row[0])

    def show(self, session_id: str) -> dict[str, Any]:
        """Everything recorded of one conversation, as JSON-ready data; a damaged row is
        a :class:`~ikigai_core.session_json.DamagedSession`."""
        with self._connect() as db:
            db.row_factory = sqlite3.Row
            session = db.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
            turns = db.execute("SELECT * FROM turns WHERE session_id = ? ORDER BY seq",
                               (session_id,)).fetchall()
            calls = db.execute("SELECT * FROM tool_calls WHERE session_id = ? "
                               "ORDER BY turn, seq", (session_id,)).fetchall()
        if session is None:
            raise UsageError(f"no session '{session_id}'; `ikigai sessions list` shows them")
        return read_session(session_id, session, turns, calls)

    def branch(self, session_id: str, provider: str) -> Branch:
        """The conversation to go on with, for ``provider``: the latest turn and the turns
        it went on from (another provider's own message forms are left out; the
        provider-neutral ones are kept)."""
        data = self.show(session_id)
        turns = {turn["seq"]: turn for turn in data["turns"]}
        chain: list[dict[str, Any]] = []
        seq = max(turns, default=None)
        while seq is not None:  # read_session saw that each parent is an earlier turn
            chain.append(turns[seq])
            seq = turns[seq]["parent"]
        conversation = Conversation(system=data["system"])
        for turn in reversed(chain):
            for message in turn["messages"]:
                try:
                    entry = entry_of(message, keep_raw=turn["provider"] == provider,
                                     at=len(conversation.messages))
                except ValueError as exc:  # a compaction covering messages it came before
                    raise DamagedSession(session_id, str(exc)) from None
                if isinstance(entry, Compaction):
                    conversation.compactions.append(entry)
                else:
                    conversation.add(entry)
        return Branch(conversation, chain[0]["seq"] if chain else None,
                      tuple(chain[0]["skills"]) if chain else ())

    def search(self, text: str, *, limit: int) -> list[Match]:
        """The recorded prompts whose messages or tool calls hold every word of ``text``,
        the best match first, at most ``limit``."""
        query = search_query(text)
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

    def remove(self, session_id: str) -> None:
        """Delete one conversation and everything recorded of it."""
        with self._connect() as db, self._transaction(db):
            db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))


def _check_status(status: str | None) -> None:
    if not is_status(status):
        raise ValueError(f"a session's status is one of {STATUSES} or None, not {status!r}")


def _or_none(value: Any, check: Callable[[Any], bool]) -> Any:
    return value if check(value) else None


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
        with SessionStore._transaction(db):
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
