"""What the registry looked like last time, so ``ikigai refresh`` can say what changed."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from ikigai_core.notices import Notices
from ikigai_core.registry import Registry
from ikigai_core.statefiles import write_private_json


def fingerprint(registry: Registry) -> dict[str, str]:
    """Each tool's name -> a digest of where it comes from and its schema."""
    return {
        name: hashlib.sha256(
            json.dumps([tool.source, tool.location, tool.schema], sort_keys=True).encode()
        ).hexdigest()[:16]
        for name, tool in registry.items()
    }


@dataclass(frozen=True)
class Changes:
    """Tool names added, removed and changed since the last snapshot."""

    added: list[str]
    removed: list[str]
    changed: list[str]


class Snapshot:
    """The fingerprint of the last registry, in ``$IKIGAI_HOME/cache/registry.json``."""

    def __init__(self, home: Path) -> None:
        self.path = home / "cache" / "registry.json"

    def load(self) -> dict[str, str] | None:
        """The last fingerprint; ``None`` when there is none or it is unreadable."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def update(self, registry: Registry, notices: Notices) -> Changes:
        """Store ``registry``'s fingerprint and say how it differs from the last one (nothing
        when there was none: a first refresh has nothing to compare with)."""
        old, new = self.load(), fingerprint(registry)
        try:
            write_private_json(self.path, new)
        except OSError as exc:
            notices.report(f"cannot write {self.path}: {exc.strerror}; the next refresh "
                           "compares with an older list")
        if old is None:
            return Changes(added=[], removed=[], changed=[])
        return Changes(
            added=sorted(new.keys() - old.keys()),
            removed=sorted(old.keys() - new.keys()),
            changed=sorted(n for n in new.keys() & old.keys() if new[n] != old[n]),
        )
