"""Files ikigai keeps under ``$IKIGAI_HOME``: user-only, written atomically."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` and each missing parent user-only (0700); return it.

    (``Path.mkdir(parents=True)`` would give the parents the default mode, and the first
    file written under a fresh ``$IKIGAI_HOME`` would leave the home itself world-readable.)
    """
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for directory in reversed(missing):
        directory.mkdir(mode=0o700, exist_ok=True)
    return path


def write_private_json(path: Path, data: Any) -> None:
    """Write ``data`` to ``path`` user-only (0600) and atomically (temp file + rename)."""
    import tempfile  # lazy: a warm `ikigai tool list` writes nothing

    ensure_private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
