"""What the registry looked like last time, so ``ikigai refresh`` can say what changed.

Every discovery records the registry it built (issue 22: "Added" means added since the
registry the user last had, whichever command built it), writing only when it differs, so
a warm start-up writes nothing and imports neither ``json`` nor ``hashlib``.
"""

from __future__ import annotations

import zlib
from pathlib import Path

from ikigai_core.notices import Notices
from ikigai_core.record import Record
from ikigai_core.registry import Registry
from ikigai_core.statefiles import read_cache, write_cache
from ikigai_toolkit.jsonio import canonical

SNAPSHOT_VERSION = 1


def fingerprint(registry: Registry) -> dict[str, str]:
    """Each tool's name -> a checksum of where it comes from and its schema (a CRC: it
    only decides whether to say "Changed")."""
    return {name: format(zlib.crc32(canonical([tool.source, tool.location, tool.schema])
                                    .encode("utf-8", "surrogatepass")), "08x")
            for name, tool in registry.items()}


class Changes(Record):
    """Tool names added, removed and changed since the last snapshot."""

    added: list[str]
    removed: list[str]
    changed: list[str]


def changes_since(old: dict[str, str], registry: Registry) -> Changes:
    """How ``registry`` differs from the fingerprint ``old`` (nothing when ``old`` is
    empty: a first refresh has nothing to compare with)."""
    if not old:
        return Changes(added=[], removed=[], changed=[])
    new = fingerprint(registry)
    return Changes(
        added=sorted(new.keys() - old.keys()),
        removed=sorted(old.keys() - new.keys()),
        changed=sorted(n for n in new.keys() & old.keys() if new[n] != old[n]),
    )


class Snapshot:
    """The fingerprint of the last registry, in ``$IKIGAI_HOME/cache/registry.json``."""

    def __init__(self, home: Path) -> None:
        self.path = home / "cache" / "registry.json"

    def load(self) -> dict[str, str]:
        """The last fingerprint; empty when there is none or it is unreadable."""
        return read_cache(self.path, SNAPSHOT_VERSION, "tools")

    def record(self, registry: Registry, notices: Notices) -> None:
        """Store ``registry``'s fingerprint if it differs from the stored one; a file that
        cannot be written is reported in ``notices``."""
        new = fingerprint(registry)
        if new == self.load():
            return
        try:
            write_cache(self.path, SNAPSHOT_VERSION, "tools", new)
        except OSError as exc:
            notices.report(f"cannot write {self.path}: {exc.strerror}; the next refresh "
                           "compares with an older list")
