"""Remember each tool file's schema, keyed by the file's path, size, mtime and inode.

A call whose tool files did not change asks no ``--schema`` at all. The cache is a
plain JSON file under ``$IKIGAI_HOME``; a corrupt one is silently rebuilt.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ikigai_core.statefiles import read_cache, write_cache
from ikigai_core.tool_schema import validate_schema
from ikigai_toolkit.jsonio import canonical

CACHE_VERSION = 1


def _usable(entry: Mapping[str, Any]) -> bool:
    """A hand-edited entry must still be a reason, or a schema with what a tool needs."""
    schema = entry.get("schema")
    if schema is None:
        return isinstance(entry.get("error"), str)
    return (isinstance(schema, dict) and isinstance(schema.get("name"), str)
            and isinstance(schema.get("description"), str)
            and isinstance(schema.get("parameters"), dict))


def file_key(path: Path) -> list[int] | None:
    """What identifies one version of a file (following symlinks), or None if it is gone."""
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev]


class SchemaCache:
    """Schemas (or deterministic failures) per tool file, loaded once, saved atomically."""

    def __init__(self, home: Path) -> None:
        self.path = home / "cache" / "schemas.json"
        self._entries: dict[str, Any] = read_cache(self.path, CACHE_VERSION, "entries")
        self._dirty = False

    def checked(self, schema: Mapping[str, Any]) -> str | None:
        """:func:`~ikigai_core.tool_schema.validate_schema` for a schema a plugin gave directly,
        remembered under the schema's own canonical text (exact, and no hashing to import).

        Saves importing jsonschema on every start-up of a warm cache.
        """
        digest = "schema:" + canonical(schema)
        entry = self._entries.get(digest)
        known = entry.get("problem", 0) if isinstance(entry, dict) else 0
        if known is None or isinstance(known, str):
            return known
        problem = validate_schema(schema)
        self._entries[digest] = {"problem": problem}
        self._dirty = True
        return problem

    def get(self, path: Path) -> Mapping[str, Any] | None:
        """The cached answer for ``path`` if the file is unchanged: ``{"schema": ...}`` or
        ``{"error": ...}``."""
        entry = self._entries.get(str(path))
        if not isinstance(entry, dict) or entry.get("key") != file_key(path):
            return None
        return entry if _usable(entry) else None

    def put(self, path: Path, key: list[int] | None, **answer: Any) -> None:
        """Remember the answer for the file version ``key`` (taken before asking)."""
        if key is not None:
            self._entries[str(path)] = {"key": key, **answer}
            self._dirty = True

    def save(self) -> None:
        """Write the cache if it changed."""
        if self._dirty:
            write_cache(self.path, CACHE_VERSION, "entries", self._entries)
            self._dirty = False

