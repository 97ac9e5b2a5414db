"""The persistent page cache, ``$IKIGAI_HOME/web-cache.db`` (SQLite, user-only).

Keyed by the normalised URL; an entry holds the page as served and as extracted, with its
``ETag``/``Last-Modified`` for revalidation and the address it came from (a hit is checked
against today's allow-list with no DNS lookup). Bounded by ``web.cache_max_bytes``: the
least recently used entries go first. A corrupt file is deleted and started afresh.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pages (
    key TEXT PRIMARY KEY, fetched_at REAL NOT NULL, used_at REAL NOT NULL,
    size INTEGER NOT NULL, address TEXT NOT NULL, host TEXT NOT NULL,
    etag TEXT, last_modified TEXT, page TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS robots (
    origin TEXT PRIMARY KEY, fetched_at REAL NOT NULL, status INTEGER NOT NULL, body TEXT);
"""
ROBOTS_TTL = 24 * 3600.0


@dataclass
class Entry:
    """A cached page: ``page`` (the result fields and ``raw``), where and when it came from."""

    page: dict[str, Any]
    fetched_at: float
    address: str
    host: str
    etag: str | None
    last_modified: str | None


def normalise(url: str) -> str:
    """``url`` without its fragment, with a lower-case scheme and host and no default port."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(scheme)
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port in (None, default) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


class Cache:
    """The cache file at ``path``, bounded to ``max_bytes``."""

    def __init__(self, path: Path, max_bytes: int) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        os.close(fd)
        try:
            db = sqlite3.connect(self.path, timeout=5, isolation_level=None)
            db.executescript(_SCHEMA)
        except sqlite3.DatabaseError:
            self.path.unlink(missing_ok=True)
            db = sqlite3.connect(self.path, timeout=5, isolation_level=None)
            db.executescript(_SCHEMA)
        return db

    def get(self, url: str) -> Entry | None:
        """The entry for ``url``, or ``None``."""
        try:
            row = self._db.execute(
                "SELECT page, fetched_at, address, host, etag, last_modified FROM pages "
                "WHERE key = ?", (normalise(url),)).fetchone()
        except sqlite3.DatabaseError:
            return None
        if row is None:
            return None
        return Entry(json.loads(row[0]), *row[1:])

    def put(self, url: str, entry: Entry) -> None:
        """Store ``entry`` for ``url``, then evict down to the size bound."""
        page = json.dumps(entry.page, ensure_ascii=False)
        now = time.time()
        self._db.execute(
            "INSERT OR REPLACE INTO pages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (normalise(url), entry.fetched_at, now, len(page.encode()), entry.address,
             entry.host, entry.etag, entry.last_modified, page))
        self._evict()

    def touch(self, url: str, fetched_at: float) -> None:
        """Mark ``url``'s entry revalidated (a 304) at ``fetched_at``."""
        self._db.execute("UPDATE pages SET fetched_at = ?, used_at = ? WHERE key = ?",
                         (fetched_at, fetched_at, normalise(url)))

    def _evict(self) -> None:
        total = self._db.execute("SELECT COALESCE(SUM(size), 0) FROM pages").fetchone()[0]
        if total <= self.max_bytes:
            return
        for key, size in self._db.execute(
                "SELECT key, size FROM pages ORDER BY used_at").fetchall():
            self._db.execute("DELETE FROM pages WHERE key = ?", (key,))
            total -= size
            if total <= self.max_bytes:
                break

    def robots(self, origin: str) -> tuple[int, str] | None:
        """The stored ``robots.txt`` of ``origin`` (status, body) if younger than a day."""
        row = self._db.execute("SELECT status, body, fetched_at FROM robots WHERE origin = ?",
                               (origin,)).fetchone()
        if row is None or time.time() - row[2] > ROBOTS_TTL:
            return None
        return row[0], row[1]

    def put_robots(self, origin: str, status: int, body: str) -> None:
        """Remember ``origin``'s ``robots.txt``."""
        self._db.execute("INSERT OR REPLACE INTO robots VALUES (?, ?, ?, ?)",
                         (origin, time.time(), status, body))
