"""The session log: every ``ask`` and ``chat`` conversation in SQLite, ``$IKIGAI_HOME/sessions.db``.

One row per conversation (``sessions``), one per prompt and everything it led to (``turns``:
the messages, provider, model, token usage, the SHA-256 of each advertised tool's schema),
one per tool call (``tool_calls``: arguments, envelope, duration). A turn is written in one
transaction, so a crash or Ctrl-C never leaves half of one. The database is in WAL mode
with a busy timeout, so several ikigai processes can write at once; it carries its schema
version (``PRAGMA user_version``) and :data:`MIGRATIONS` bring an older one up to date.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ikigai_core.conversation import (
    AssistantMessage,
    Conversation,
    Message,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    Usage,
    UserMessage,
    usage_of,
)
from ikigai_core.errors import IkigaiError, UsageError
from ikigai_core.statefiles import ensure_private_dir

if TYPE_CHECKING:
    from ikigai_core.tools import Tool

DB_NAME = "sessions.db"
BUSY_TIMEOUT = 30.0
"""Seconds a writer waits for another process's transaction to end."""

MIGRATIONS: tuple[str, ...] = (
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
)
"""``MIGRATIONS[n]`` takes a database from schema version ``n`` to ``n + 1``; append only."""
SCHEMA_VERSION = len(MIGRATIONS)


def schema_hash(tool: Tool) -> str:
    """SHA-256 of the tool's schema as JSON with sorted keys: what the model was offered."""
    schema = tool.schema or {"name": tool.name, "description": tool.description,
                             "parameters": tool.parameters}
    text = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# -- Messages as JSON -----------------------------------------------------------


def _call_json(call: ToolCall) -> dict[str, Any]:
    data: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    if call.arguments_error is not None:
        data["arguments_error"] = call.arguments_error
    return data


def _call_of(data: Mapping[str, Any]) -> ToolCall:
    return ToolCall(data["id"], data["name"], data["arguments"], data.get("arguments_error"))


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return None
    return value


def message_json(message: Message) -> dict[str, Any]:
    """One message as a JSON object (``role`` says which kind)."""
    if isinstance(message, UserMessage):
        return {"role": "user", "text": message.text}
    if isinstance(message, AssistantMessage):
        usage = message.usage
        return {"role": "assistant", "text": message.text,
                "tool_calls": [_call_json(c) for c in message.tool_calls],
                "stop_reason": message.stop_reason, "raw": _jsonable(message.raw),
                "usage": None if usage is None else {"input_tokens": usage.input_tokens,
                                                     "output_tokens": usage.output_tokens}}
    return {"role": "tool", "results": [
        {"call": _call_json(r.call), "envelope": r.envelope, "duration": r.duration}
        for r in message.results]}


def message_of(data: Mapping[str, Any], *, keep_raw: bool) -> Message:
    """The message :func:`message_json` wrote; ``raw`` only when ``keep_raw`` (the
    provider-specific form is wrong for another provider)."""
    if data["role"] == "user":
        return UserMessage(data["text"])
    if data["role"] == "assistant":
        usage = data.get("usage")
        return AssistantMessage(
            data["text"], tuple(_call_of(c) for c in data["tool_calls"]),
            data.get("raw") if keep_raw else None, data.get("stop_reason"),
            Usage(**usage) if usage else None)
    return ToolResultsMessage(tuple(
        ToolResult(_call_of(r["call"]), r["envelope"], r.get("duration", 0.0))
        for r in data["results"]))


# -- The store ------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """One prompt and everything it led to, as it is recorded.

    :param prompt: what the user sent.
    :param provider: the provider's name.
    :param model: the model asked.
    :param messages: the messages the prompt added to the conversation (its own first).
    :param tools: the tools advertised, by name.
    """

    prompt: str
    provider: str
    model: str
    messages: Sequence[Message]
    tools: Mapping[str, Tool]


@dataclass(frozen=True)
class SessionSummary:
    """One conversation as ``ikigai sessions list`` shows it."""

    id: str
    created: float
    updated: float
    cwd: str
    command: str
    model: str
    first_prompt: str
    turns: int
    input_tokens: int
    output_tokens: int


def new_session_id() -> str:
    """A fresh conversation id: 12 hex digits."""
    return secrets.token_hex(6)


SQLITE_FULL = 13
"""``sqlite3.SQLITE_FULL`` (named from Python 3.11): the disk is full (issue 21 item 12)."""


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
        try:
            with closing(sqlite3.connect(self.path, timeout=BUSY_TIMEOUT,
                                         isolation_level=None)) as db:
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

    def add_turn(self, session_id: str, turn: Turn, *, command: str, cwd: Path,
                 system: str | None) -> None:
        """Record ``turn`` in conversation ``session_id`` (created on its first turn), in
        one transaction."""
        now = time.time()
        usage = usage_of(turn.messages)
        messages = json.dumps([message_json(m) for m in turn.messages], ensure_ascii=False)
        tools = json.dumps({name: schema_hash(tool) for name, tool in turn.tools.items()})
        with self._connect() as db, self._transaction(db):
            db.execute("INSERT OR IGNORE INTO sessions VALUES (?, ?, ?, ?, ?, ?)",
                       (session_id, now, now, str(cwd), command, system))
            db.execute("UPDATE sessions SET updated = ? WHERE id = ?", (now, session_id))
            seq = db.execute("SELECT COUNT(*) FROM turns WHERE session_id = ?",
                             (session_id,)).fetchone()[0]
            db.execute("INSERT INTO turns VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (session_id, seq, now, turn.provider, turn.model, turn.prompt,
                        usage.input_tokens, usage.output_tokens, messages, tools))
            results = [r for m in turn.messages if isinstance(m, ToolResultsMessage)
                       for r in m.results]
            db.executemany("INSERT INTO tool_calls VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [
                (session_id, seq, index, r.call.id, r.call.name,
                 json.dumps(r.call.arguments, ensure_ascii=False),
                 json.dumps(r.envelope, ensure_ascii=False), r.duration)
                for index, r in enumerate(results)])

    def sessions(self) -> list[SessionSummary]:
        """Every conversation, the most recently used first."""
        with self._connect() as db:
            rows = db.execute("""
                SELECT s.id, s.created, s.updated, s.cwd, s.command,
                       (SELECT model FROM turns WHERE session_id = s.id ORDER BY seq DESC),
                       (SELECT prompt FROM turns WHERE session_id = s.id ORDER BY seq),
                       COUNT(t.seq), TOTAL(t.input_tokens), TOTAL(t.output_tokens)
                FROM sessions s JOIN turns t ON t.session_id = s.id
                GROUP BY s.id ORDER BY s.updated DESC, s.rowid DESC""").fetchall()
        return [SessionSummary(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7],
                               int(row[8]), int(row[9])) for row in rows]

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
        """Everything recorded of one conversation, as JSON-ready data."""
        with self._connect() as db:
            db.row_factory = sqlite3.Row
            session = db.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
            turns = db.execute("SELECT * FROM turns WHERE session_id = ? ORDER BY seq",
                               (session_id,)).fetchall()
            calls = db.execute("SELECT * FROM tool_calls WHERE session_id = ? "
                               "ORDER BY turn, seq", (session_id,)).fetchall()
        if session is None:
            raise UsageError(f"no session '{session_id}'; `ikigai sessions list` shows them")
        data = dict(session)
        data["turns"] = []
        for turn in turns:
            item = dict(turn)
            del item["session_id"]
            item["messages"] = json.loads(item["messages"])
            item["tools"] = json.loads(item["tools"])
            item["tool_calls"] = [
                {"call_id": c["call_id"], "name": c["name"],
                 "arguments": json.loads(c["arguments"]), "envelope": json.loads(c["envelope"]),
                 "duration": c["duration"]}
                for c in calls if c["turn"] == turn["seq"]]
            data["turns"].append(item)
        return data

    def conversation(self, session_id: str, provider: str) -> Conversation:
        """The conversation to continue, for ``provider`` (another provider's own message
        forms are left out; the provider-neutral ones are kept)."""
        data = self.show(session_id)
        conversation = Conversation(system=data["system"])
        for turn in data["turns"]:
            for message in turn["messages"]:
                conversation.add(message_of(message, keep_raw=turn["provider"] == provider))
        return conversation

    def remove(self, session_id: str) -> None:
        """Delete one conversation and everything recorded of it."""
        with self._connect() as db, self._transaction(db):
            db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))


def _use_wal(db: sqlite3.Connection) -> None:
    """Put the database in WAL mode (once: the mode is kept in the file). Switching needs
    the database to itself, and SQLite does not wait for that, so this waits up to
    :data:`BUSY_TIMEOUT` while another process creates it too."""
    deadline = time.monotonic() + BUSY_TIMEOUT
    while db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        try:
            db.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError:
            if time.monotonic() > deadline:
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
            for statement in MIGRATIONS[version].split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {version + 1}")
