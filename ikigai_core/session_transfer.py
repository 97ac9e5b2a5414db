"""``ikigai sessions export`` and ``import``: a store's conversations as JSON lines, so
history moves between stores (SQLite, PostgreSQL) losslessly.

Each line is one conversation, ``{"session": {...}, "turns": [...], "tool_calls": [...]}``,
each record with exactly the fields every store keeps
(:data:`~ikigai_core.sessions.SESSION_FIELDS`, ``TURN_FIELDS``, ``CALL_FIELDS``; JSON
fields as the JSON text stored), the oldest conversation first: exporting what was
imported gives the same bytes. A file to import may be hostile: every line is checked as a
recorded conversation is (:func:`~ikigai_core.session_json.read_session`) before anything
is written, and a bad one is one line naming it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ikigai_core.errors import UsageError
from ikigai_core.session_json import DamagedSession, is_count, is_text, read_session
from ikigai_core.sessions import CALL_FIELDS, SESSION_FIELDS, TURN_FIELDS, Rows, SessionStore
from ikigai_core.strictjson import loads

KEYS = ("session", "turns", "tool_calls")
"""The keys of an exported line."""


def export_lines(store: SessionStore) -> Iterator[str]:
    """Each conversation of ``store`` as one JSON line (no newline), the oldest first; a
    damaged one is a :class:`~ikigai_core.session_json.DamagedSession` (remove it first)."""
    for session_id in store.ids():
        rows = store.rows(session_id)
        if rows is None:  # removed meanwhile
            continue
        read_session(session_id, rows.session, rows.turns, rows.calls)
        yield json.dumps({
            "session": {f: rows.session[f] for f in SESSION_FIELDS},
            "turns": [{f: turn[f] for f in TURN_FIELDS} for turn in rows.turns],
            "tool_calls": [{f: call[f] for f in CALL_FIELDS} for call in rows.calls],
        }, ensure_ascii=False)


def read_lines(lines: Sequence[str], source: str) -> list[Rows]:
    """The conversations of an exported file's ``lines`` (blank ones skipped), every value
    checked; a bad line is a :class:`UsageError` naming ``source`` and the line."""
    found: list[Rows] = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            try:
                found.append(_rows_of(line))
            except ValueError as exc:
                raise UsageError(f"{source} line {number}: {exc}; nothing was imported") \
                    from None
    return found


def import_rows(store: SessionStore, conversations: Sequence[Rows]) -> tuple[int, int]:
    """Record each conversation in ``store`` (each in one transaction); returns how many
    were imported and how many were there already (by id, left as they were)."""
    imported = sum(store.put(rows) for rows in conversations)
    return imported, len(conversations) - imported


def _rows_of(line: str) -> Rows:
    data = loads(line)
    _exact(data, KEYS, "the line")
    session = _exact(data["session"], SESSION_FIELDS, "its session")
    turns = [_exact(t, TURN_FIELDS, "a turn") for t in _list(data["turns"], "turns")]
    calls = [_exact(c, CALL_FIELDS, "a tool call") for c in _list(data["tool_calls"],
                                                                  "tool_calls")]
    session_id = session["id"]
    if not is_text(session_id) or not session_id:
        raise ValueError("its session's id is no text")
    if [turn["seq"] for turn in turns] != list(range(len(turns))):
        raise ValueError(f"session {session_id}'s turns are not numbered 0, 1, 2, ...")
    seen: set[tuple[Any, Any]] = set()
    for call in calls:
        key = (call["turn"], call["seq"])
        if not (is_count(call["turn"]) and call["turn"] < len(turns) and is_count(call["seq"])
                and key not in seen):
            raise ValueError(f"session {session_id} has a tool call of no turn, or twice")
        seen.add(key)
    try:
        read_session(session_id, session, turns, calls)
    except DamagedSession as exc:
        raise ValueError(f"session {session_id}: {exc.what}") from None
    return Rows(session, turns, calls)


def _exact(value: Any, keys: Sequence[str], what: str) -> Mapping[str, Any]:
    if not isinstance(value, dict) or set(value) != set(keys):
        raise ValueError(f"{what} is not an object with exactly {', '.join(keys)}")
    return value


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"{what} is not a list")
    return value
