"""Each server's tool listing, cached under ``$IKIGAI_HOME/cache/mcp-tools.json``.

Keyed by the server's whole configuration, so a warm ``ikigai tool list`` starts no
server, and editing a server (or a ``${VAR}`` it uses) lists it again. A failure is
cached too (a server hanging at start-up must not cost every command 10 s); ``ikigai
refresh`` lists every server again.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ikigai_core.statefiles import write_private_json

CACHE_VERSION = 1
_lock = threading.Lock()


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()  # the key may hold secrets: keep no text


class ListingCache:
    """``{digest of the server's config: {"tools": [...]} or {"error": "..."}}``."""

    def __init__(self, home: Path) -> None:
        self.path = home / "cache" / "mcp-tools.json"

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
            return {}
        servers = data.get("servers")
        return servers if isinstance(servers, dict) else {}

    def get(self, key: str) -> Mapping[str, Any] | None:
        """The cached listing ``{"tools": [...]}`` or failure ``{"error": ...}``, if any."""
        entry = self._load().get(_digest(key))
        if isinstance(entry, dict) and (isinstance(entry.get("tools"), list)
                                        or isinstance(entry.get("error"), str)):
            return entry
        return None

    def put(self, key: str, entry: Mapping[str, Any]) -> None:
        """Remember ``entry`` for the server ``key`` (read, changed and written under a lock)."""
        with _lock:
            servers = self._load()
            servers[_digest(key)] = dict(entry)
            write_private_json(self.path, {"version": CACHE_VERSION, "servers": servers})
