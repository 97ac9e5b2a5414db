"""Each server's tool listing, cached under ``$IKIGAI_HOME/cache/mcp-tools.json``.

Keyed by the server's whole configuration, so a warm ``ikigai tool list`` starts no
server, and editing a server (or a ``${VAR}`` it uses) lists it again. A failure is
cached too (a server hanging at start-up must not cost every command 10 s); ``ikigai
refresh`` lists every server again.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ikigai_core import read_cache
from ikigai_core.statefiles import write_private_json

CACHE_VERSION = 3  # 3: errors cached by 2 may hold a ${VAR}'s value (issue 21 item 2)
_lock = threading.Lock()


def _digest(key: str) -> str:
    """A 64-bit checksum of the server's configuration: the key may hold secrets, so the
    file keeps no text of it. A checksum, not SHA-256: ``hashlib`` loads OpenSSL on every
    start-up with a server configured (the start-up ledger), and a collision only keeps a
    stale listing until ``ikigai refresh``."""
    data = key.encode()
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


class ListingCache:
    """``{digest of the server's config: {"tools": [...]} or {"error": "..."}}``, read once
    (one cache serves every server of a discovery)."""

    def __init__(self, home: Path) -> None:
        self.path = home / "cache" / "mcp-tools.json"
        self._servers = read_cache(self.path, CACHE_VERSION, "servers")

    def get(self, key: str) -> Mapping[str, Any] | None:
        """The cached listing ``{"tools": [...]}`` or failure ``{"error": ...}``, if any."""
        entry = self._servers.get(_digest(key))
        if isinstance(entry, dict) and (isinstance(entry.get("tools"), list)
                                        or isinstance(entry.get("error"), str)):
            return entry
        return None

    def put(self, key: str, entry: Mapping[str, Any]) -> None:
        """Remember ``entry`` for the server ``key``: the file is read again, changed and
        written under a lock (another ikigai may have written it meanwhile)."""
        with _lock:
            servers = read_cache(self.path, CACHE_VERSION, "servers")
            servers[_digest(key)] = dict(entry)
            self._servers = servers  # this process sees it even if the disk is full
            write_private_json(self.path, {"version": CACHE_VERSION, "servers": servers})
