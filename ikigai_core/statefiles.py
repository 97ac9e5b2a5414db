"""Where ``$IKIGAI_HOME`` is, and the files ikigai keeps there: user-only, written atomically."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ikigai_core.errors import ConfigError
from ikigai_tools_builtin._jsonio import loads


def ikigai_home(environ: Mapping[str, str] = os.environ) -> Path:
    """``$IKIGAI_HOME``, default ``~/.ikigai``; a relative one is taken from the directory
    ikigai starts in, once, so tools running elsewhere do not move it."""
    home = environ.get("IKIGAI_HOME")
    if not home:
        return Path.home() / ".ikigai"
    try:
        return Path(os.path.abspath(Path(home).expanduser()))
    except FileNotFoundError:
        raise ConfigError(
            f"IKIGAI_HOME={home} is relative and the current directory no longer exists; "
            "cd to an existing directory or make IKIGAI_HOME absolute"
        ) from None


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` and each missing parent user-only (0700); return it.

    (``Path.mkdir(parents=True)`` would give the parents the default mode, and the first
    file written under a fresh ``$IKIGAI_HOME`` would leave the home itself world-readable.)
    """
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for directory in reversed(missing):
        directory.mkdir(mode=0o700, exist_ok=True)
    return path


def read_json(path: Path, missing: Any) -> Any:
    """The JSON value in ``path``: ``missing`` when there is no file, ``None`` when it is not
    JSON (or not UTF-8); a file that cannot be read is one :class:`ConfigError`."""
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        return missing
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        return loads(text)
    except ValueError:  # not JSON, or not UTF-8 (UnicodeDecodeError)
        return None


def read_cache(path: Path, version: int, key: str) -> dict[str, Any]:
    """The ``key`` object of a cache file written as ``{"version": version, key: {...}}``;
    ``{}`` when the file is missing, unreadable, not JSON, of another version or of
    another shape (a cache is only ever a shortcut: what it lacks is asked again)."""
    try:
        data = loads(path.read_bytes())
    except (OSError, ValueError):  # ValueError: not JSON, or not UTF-8
        return {}
    if not isinstance(data, dict) or data.get("version") != version:
        return {}
    found = data.get(key)
    return found if isinstance(found, dict) else {}


def write_private_json(path: Path, data: Any) -> None:
    """Write ``data`` to ``path`` user-only (0600) and atomically (temp file + rename)."""
    import json  # lazy, with tempfile: a warm `ikigai tool list` writes nothing
    import tempfile

    ensure_private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path``'s ``.lock`` file while changing ``path``; a
    home that cannot be written is one :class:`ConfigError`."""
    import fcntl  # lazy: only a change locks

    try:
        ensure_private_dir(path.parent)
        fd = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror}; check IKIGAI_HOME") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
