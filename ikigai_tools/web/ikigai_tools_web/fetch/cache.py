"""The persistent page cache, ``$IKIGAI_HOME/web-cache.db`` (SQLite, user-only).

Keyed by the normalised URL; an entry holds the page as served and as extracted, with its
``ETag``/``Last-Modified`` for revalidation and the address it came from (a hit is checked
against today's allow-list with no DNS lookup). Bounded by ``web.cache_max_bytes``: the
least recently used entries go first. A corrupt file is deleted and started afresh.
"""

from __future__ import annotations

import json
import os
import time

try:  # the C module: sqlite3's wrapper imports datetime and registers adapters, a third
    import _sqlite3 as sqlite3  # of a cache hit's own time (docs/web.md, the ledger there)
except ImportError:  # pragma: no cover - an interpreter without the split
    import sqlite3  # type: ignore[no-redef]
from urllib.parse import urlsplit, urlunsplit

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs a cache hit 2 ms of its 5 (docs/web.md)
    from typing import Any

VERSION = 2
"""The layout's version (``PRAGMA user_version``): a file of another one is emptied."""
_SCHEMA = """
DROP TABLE IF EXISTS pages;
DROP TABLE IF EXISTS robots;
CREATE TABLE pages (
    key TEXT PRIMARY KEY, fetched_at REAL NOT NULL, used_at REAL NOT NULL,
    size INTEGER NOT NULL, address TEXT NOT NULL, host TEXT NOT NULL, private INTEGER NOT NULL,
    etag TEXT, last_modified TEXT, page TEXT NOT NULL, raw TEXT NOT NULL, markdown TEXT);
CREATE TABLE robots (
    origin TEXT PRIMARY KEY, fetched_at REAL NOT NULL, status INTEGER NOT NULL, body TEXT);
"""
ROBOTS_TTL = 24 * 3600.0


class Entry:
    """A cached page: ``page`` (the result fields and ``raw``), where and when it came from.

    :param private: whether ``address`` was private (allow-listed) when it was fetched: only
        then does a hit check it again against the allow-list.
    """

    __slots__ = ("page", "fetched_at", "address", "host", "private", "etag", "last_modified")

    def __init__(self, page: dict[str, Any], fetched_at: float, address: str, host: str,
                 private: bool, etag: str | None, last_modified: str | None) -> None:
        self.page = page
        self.fetched_at = fetched_at
        self.address = address
        self.host = host
        self.private = private
        self.etag = etag
        self.last_modified = last_modified


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

    def __init__(self, path: str, max_bytes: int) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        os.makedirs(os.path.dirname(self.path) or ".", mode=0o700, exist_ok=True)
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        try:
            return self._connect()
        except sqlite3.DatabaseError:  # not a database (or damaged): start afresh
            os.unlink(self.path)
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
            return self._connect()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=5, isolation_level=None)
        if db.execute("PRAGMA user_version").fetchone()[0] != VERSION:
            db.executescript(f"{_SCHEMA}PRAGMA user_version = {VERSION};")
        return db

    def get(self, url: str) -> Entry | None:
        """The entry for ``url``, or ``None``."""
        try:
            row = self._db.execute(
                "SELECT page, fetched_at, address, host, private, etag, last_modified, raw, "
                "markdown FROM pages WHERE key = ?", (normalise(url),)).fetchone()
        except sqlite3.DatabaseError:
            return None
        if row is None:
            return None
        page = json.loads(row[0])
        page["raw"] = row[7]
        if row[8] is not None:
            page["markdown"] = row[8]
        return Entry(page, row[1], row[2], row[3], bool(row[4]), row[5], row[6])

    def put(self, url: str, entry: Entry) -> None:
        """Store ``entry`` for ``url``, then evict down to the size bound. The page's text
        goes in columns of its own, not through JSON: a big page is not copied twice more."""
        raw, markdown = entry.page["raw"], entry.page.get("markdown")
        page = json.dumps({k: v for k, v in entry.page.items() if k not in ("raw", "markdown")},
                          ensure_ascii=False)
        size = len(page) + len(raw) + len(markdown or "")  # characters: near enough
        self._db.execute(
            "INSERT OR REPLACE INTO pages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (normalise(url), entry.fetched_at, time.time(), size, entry.address, entry.host,
             entry.private, entry.etag, entry.last_modified, page, raw, markdown))
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
