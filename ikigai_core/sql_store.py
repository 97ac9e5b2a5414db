"""What the SQL session stores share: the records in three tables, read and written with
the same statements through Python's DB-API (:class:`SqlStore`); each store gives its
connections, transactions, migrations, listing and search (:mod:`ikigai_core.sqlite_store`,
ikigai-store-postgres)."""

from __future__ import annotations

import json
import time
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from ikigai_core.conversation import ToolResultsMessage, usage_of
from ikigai_core.session_json import is_count, is_number, is_status, is_text, message_json
from ikigai_core.sessions import (
    CALL_FIELDS,
    SESSION_FIELDS,
    TURN_FIELDS,
    Rows,
    SessionStore,
    SessionSummary,
    Turn,
    check_status,
    schema_hash,
)

COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
"""The token counts of a turn, summed by ``sessions list``."""


class SqlStore(SessionStore):
    """A session store in three SQL tables, ``sessions``, ``turns`` and ``tool_calls``,
    with the columns :data:`~ikigai_core.sessions.SESSION_FIELDS`, ``TURN_FIELDS`` (and
    ``session_id``) and ``CALL_FIELDS`` (and ``session_id``); statements are written with
    ``?`` parameters, which :meth:`_sql` turns into the driver's."""

    ORDER = "rowid"
    """A column of ``sessions`` in the order they were recorded (ties of ``updated``)."""
    IDS = "created, id"
    """The order of :meth:`ids`: the oldest first, ties by id (byte by byte)."""
    SUMMARIES = ""
    """The query behind :meth:`sessions`: one row per conversation, the most recently
    used first, with the columns :meth:`_summary` reads."""

    @abstractmethod
    def _connect(self) -> AbstractContextManager[Any]:
        """A DB-API connection to the migrated store, in autocommit; the store's errors
        raised as one-line :class:`~ikigai_core.errors.IkigaiError`."""

    @abstractmethod
    def _transaction(self, db: Any) -> AbstractContextManager[None]:
        """One transaction on ``db`` that holds the writes of others to one conversation
        off until it ends (committed, or rolled back on any exception)."""

    def _sql(self, statement: str) -> str:
        """``statement`` with the driver's parameter marks (SQLite's are ``?``)."""
        return statement

    def _run(self, db: Any, statement: str, params: Sequence[Any] = ()) -> Any:
        cursor = db.cursor()
        cursor.execute(self._sql(statement), params)
        return cursor

    def _dicts(self, db: Any, statement: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        cursor = self._run(db, statement, params)
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def _insert(self, db: Any, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
        if rows:
            columns = list(rows[0])
            db.cursor().executemany(self._sql(
                f"INSERT INTO {table} ({', '.join(columns)}) "
                f"VALUES ({', '.join('?' for _ in columns)})"),
                [[row[column] for column in columns] for row in rows])

    def _insert_turns(self, db: Any, turns: Sequence[Mapping[str, Any]]) -> None:
        """Insert turn rows (with ``session_id``); a store may add its own columns."""
        self._insert(db, "turns", turns)

    # -- Writing -----------------------------------------------------------------

    def new_session(self, session_id: str, *, command: str, cwd: Path, system: str | None,
                    parent: str | None = None, fork_turn: int | None = None,
                    agent: str | None = None, status: str | None = None) -> None:
        check_status(status)
        now = time.time()
        with self._connect() as db, self._transaction(db):
            self._insert(db, "sessions", [dict(zip(SESSION_FIELDS, (
                session_id, now, now, str(cwd), command, system, parent, fork_turn, agent,
                status), strict=True))])

    def set_status(self, session_id: str, status: str | None) -> None:
        check_status(status)
        with self._connect() as db, self._transaction(db):
            self._run(db, "UPDATE sessions SET status = ? WHERE id = ?", (status, session_id))

    def add_turn(self, session_id: str, turn: Turn, *, command: str, cwd: Path,
                 system: str | None, parent: int | None = None) -> int:
        now = time.time()
        usage = usage_of(turn.messages)
        messages = json.dumps([message_json(m) for m in turn.messages], ensure_ascii=False)
        tools = json.dumps({name: schema_hash(tool) for name, tool in turn.tools.items()})
        results = [r for m in turn.messages if isinstance(m, ToolResultsMessage)
                   for r in m.results]
        with self._connect() as db, self._transaction(db):
            self._run(db, "INSERT INTO sessions (id, created, updated, cwd, command, system) "
                      "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                      (session_id, now, now, str(cwd), command, system))
            self._run(db, "UPDATE sessions SET updated = ?, system = ? WHERE id = ?",
                      (now, system, session_id))  # holds other writers to it off till the end
            seq: int = self._run(db, "SELECT COUNT(*) FROM turns WHERE session_id = ?",
                                 (session_id,)).fetchone()[0]
            self._insert_turns(db, [{
                "session_id": session_id, "seq": seq, "created": now,
                "provider": turn.provider, "model": turn.model, "prompt": turn.prompt,
                "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                "messages": messages, "tools": tools, "parent": parent,
                "skills": json.dumps(list(turn.skills)),
                "cache_read_tokens": turn.cache_read_tokens,
                "cache_write_tokens": turn.cache_write_tokens, "cost": turn.cost}])
            self._insert(db, "tool_calls", [{
                "session_id": session_id, "turn": seq, "seq": index, "call_id": r.call.id,
                "name": r.call.name, "arguments": json.dumps(r.call.arguments,
                                                             ensure_ascii=False),
                "envelope": json.dumps(r.envelope, ensure_ascii=False),
                "duration": r.duration} for index, r in enumerate(results)])
        return seq

    def put(self, rows: Rows) -> bool:
        session_id = rows.session["id"]
        with self._connect() as db, self._transaction(db):
            if self._run(db, "SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                return False
            self._insert(db, "sessions", [{f: rows.session[f] for f in SESSION_FIELDS}])
            self._insert_turns(db, [{"session_id": session_id, **{f: t[f] for f in TURN_FIELDS}}
                                    for t in rows.turns])
            self._insert(db, "tool_calls", [{"session_id": session_id,
                                             **{f: c[f] for f in CALL_FIELDS}}
                                            for c in rows.calls])
        return True

    def remove(self, session_id: str) -> None:
        with self._connect() as db, self._transaction(db):
            self._run(db, "DELETE FROM sessions WHERE id = ?", (session_id,))

    # -- Reading -----------------------------------------------------------------

    def sessions(self) -> list[SessionSummary]:
        with self._connect() as db:
            rows = self._run(db, self.SUMMARIES).fetchall()
        return [_summary(row) for row in rows]

    def ids(self, prefix: str = "") -> list[str]:
        with self._connect() as db:
            found = self._run(db, f"SELECT id FROM sessions ORDER BY {self.IDS}").fetchall()
        return [str(row[0]) for row in found if str(row[0]).startswith(prefix)]

    def last_in(self, cwd: Path) -> str | None:
        with self._connect() as db:
            row = self._run(db, f"SELECT id FROM sessions WHERE cwd = ? "
                            f"ORDER BY updated DESC, {self.ORDER} DESC LIMIT 1",
                            (str(cwd),)).fetchone()
        return None if row is None else str(row[0])

    def rows(self, session_id: str) -> Rows | None:
        with self._connect() as db:
            session = self._dicts(db, f"SELECT {', '.join(SESSION_FIELDS)} FROM sessions "
                                  "WHERE id = ?", (session_id,))
            turns = self._dicts(db, f"SELECT {', '.join(TURN_FIELDS)} FROM turns "
                                "WHERE session_id = ? ORDER BY seq", (session_id,))
            calls = self._dicts(db, f"SELECT {', '.join(CALL_FIELDS)} FROM tool_calls "
                                "WHERE session_id = ? ORDER BY turn, seq", (session_id,))
        return Rows(session[0], turns, calls) if session else None


def _or_none(value: Any, check: Callable[[Any], bool]) -> Any:
    return value if check(value) else None


def _summary(row: Sequence[Any]) -> SessionSummary:
    """A row of :attr:`SqlStore.SUMMARIES`: what it holds of the wrong type (a damaged
    record) is ``None``."""
    return SessionSummary(
        id=str(row[0]), created=_or_none(row[1], is_number),
        updated=_or_none(row[2], is_number), cwd=_or_none(row[3], is_text),
        command=_or_none(row[4], is_text), model=_or_none(row[5], is_text),
        first_prompt=_or_none(row[6], is_text), turns=row[7], input_tokens=int(row[8]),
        output_tokens=int(row[9]), cache_read_tokens=int(row[10]),
        cache_write_tokens=int(row[11]), cost=_or_none(row[12], is_number),
        parent=_or_none(row[13], is_text), fork_turn=_or_none(row[14], is_count),
        agent=_or_none(row[15], is_text), status=_or_none(row[16], is_status))


def summaries_query(total: Callable[[str], str], cost: str, order: str) -> str:
    """:attr:`SqlStore.SUMMARIES` with a dialect's sum of a count column, its sum of the
    costs (``NULL`` when any turn's is unknown) and its :attr:`SqlStore.ORDER`."""
    return f"""
        SELECT s.id, s.created, s.updated, s.cwd, s.command,
               (SELECT model FROM turns WHERE session_id = s.id ORDER BY seq DESC LIMIT 1),
               (SELECT prompt FROM turns WHERE session_id = s.id ORDER BY seq LIMIT 1),
               COUNT(t.seq), {', '.join(total(column) for column in COUNTS)}, {cost},
               s.parent, s.fork_turn, s.agent, s.status
        FROM sessions s LEFT JOIN turns t ON t.session_id = s.id
        GROUP BY s.id ORDER BY s.updated DESC, s.{order} DESC"""

