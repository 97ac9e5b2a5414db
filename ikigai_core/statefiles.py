"""Where ``$IKIGAI_HOME`` is, and the files ikigai keeps there: read only when no one else
could have written them (ssh's rule) and at most 4 MiB; written user-only and atomically."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ikigai_core.errors import ConfigError, IkigaiError
from ikigai_toolkit.jsonio import dumps, loads


class WriteError(ConfigError, OSError):
    """A state file that could not be written: one line for the CLI, and still the
    ``OSError`` (with the cause's ``strerror``) a best-effort writer (a cache) shrugs off."""

    def __init__(self, path: Path, cause: OSError) -> None:
        super().__init__(f"cannot write {path}: {cause.strerror}")
        self.strerror = cause.strerror  # no errno: str() stays the one line above


def ikigai_home(environ: Mapping[str, str] = os.environ) -> Path:
    """``$IKIGAI_HOME``, default ``~/.ikigai``; a relative one is taken from the directory
    ikigai starts in, once, so tools running elsewhere do not move it."""
    home = environ.get("IKIGAI_HOME")
    if not home:
        path = Path.home() / ".ikigai"
    else:
        try:
            path = Path(os.path.abspath(Path(home).expanduser()))
        except FileNotFoundError:
            raise ConfigError(
                f"IKIGAI_HOME={home} is relative and the current directory no longer exists; "
                "cd to an existing directory or make IKIGAI_HOME absolute"
            ) from None
    refuse_exposed(path)
    return path


def refuse_exposed(path: Path, error: type[IkigaiError] = ConfigError) -> None:
    """ssh's rule for what ikigai obeys: ``path``, when it exists, belongs to you (or root)
    and nobody else can write it; else one ``error`` naming it and the command that fixes it
    (issue 21 item 6: another local user must not be able to write your rules or trust)."""
    try:
        st = path.stat()
    except OSError:  # missing or unreachable: whoever reads it says so
        return
    reason = exposure(path, st)
    if reason is not None:
        raise error(reason)


def exposure(path: Path, st: os.stat_result) -> str | None:
    """Why ssh's rule refuses ``path``, whose ``stat()`` is ``st`` (:func:`refuse_exposed`'s
    one line), or ``None`` when it belongs to you (or root) and nobody else can write it."""
    if st.st_uid not in (os.geteuid(), 0):
        return (f"{path} belongs to another user (uid {st.st_uid}); ikigai refuses it: "
                f"remove it, or `chown {os.geteuid()} {_quoted(path)}` if it is yours")
    if st.st_mode & 0o002 or (st.st_mode & 0o020 and not _own_group(st.st_gid)):
        fix = ("set IKIGAI_HOME to a folder of your own" if st.st_mode & 0o1000
               else f"`chmod go-w {_quoted(path)}`")
        return (f"{path} is writable by other users (mode {st.st_mode & 0o7777:o}); "
                f"ikigai refuses it: {fix}")
    return None


def _own_group(gid: int) -> bool:
    """Whether you are the one member of group ``gid`` (Debian's ssh: a user private group,
    as a umask of 002 gives every file, is no one else's to write)."""
    import grp  # lazy, with pwd: only a group-writable file asks
    import pwd

    try:
        group, me = grp.getgrgid(gid), pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return False
    members = {user.pw_name for user in pwd.getpwall() if user.pw_gid == gid}
    return members | set(group.gr_mem) == {me}


def check_private(path: Path, error: type[IkigaiError] = ConfigError) -> None:
    """:func:`refuse_exposed` for the folder holding ``path``, then for ``path``."""
    refuse_exposed(path.parent, error)
    refuse_exposed(path, error)


def _quoted(path: Path) -> str:
    import shlex  # lazy: only a refusal quotes

    return shlex.quote(str(path))


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` and each missing parent user-only (0700); return it.

    (``Path.mkdir(parents=True)`` would give the parents the default mode, and the first
    file written under a fresh ``$IKIGAI_HOME`` would leave the home itself world-readable.)
    """
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for directory in reversed(missing):
        directory.mkdir(mode=0o700, exist_ok=True)
    return path


MAX_STATE_BYTES = 4 << 20
"""The most of a state file ikigai reads: a bigger one no person wrote (or it would cost
the memory and time of a hostile one)."""


def read_state(path: Path, error: type[IkigaiError] = ConfigError) -> bytes | None:
    """The bytes of ikigai's file ``path``, ``None`` when there is none; one ``error`` when
    others could have written it (:func:`check_private`), it cannot be read, or it holds
    more than :data:`MAX_STATE_BYTES`."""
    check_private(path, error)
    try:
        with open(path, "rb") as f:  # bounded even when the size it gives is a lie
            raw = f.read(min(os.fstat(f.fileno()).st_size, MAX_STATE_BYTES) + 1)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise error(f"cannot read {path}: {exc.strerror}") from exc
    if len(raw) > MAX_STATE_BYTES:
        raise error(f"{path} is over {MAX_STATE_BYTES >> 20} MiB, more than a state file of "
                    "ikigai's can be; fix or remove it")
    return raw


def parse_json(raw: bytes) -> Any:
    """The JSON value in ``raw``; not JSON, not UTF-8 or nested deeper than Python can
    follow are each a ``ValueError``."""
    try:
        return loads(raw)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def read_json(path: Path, missing: Any) -> Any:
    """The JSON value in ``path`` (:func:`read_state`): ``missing`` when there is no file,
    ``None`` when it is not JSON (:func:`parse_json`)."""
    raw = read_state(path)
    if raw is None:
        return missing
    try:
        return parse_json(raw)
    except ValueError:
        return None


def cached_json(path: Path) -> Any:
    """The JSON value in the cache file ``path``: ``OSError`` when it cannot be read,
    ``ValueError`` when it is not JSON (:func:`parse_json`) or others could have written
    it (:func:`check_private`: a cache they could edit would decide for you)."""
    try:
        check_private(path)
    except ConfigError as exc:
        raise ValueError(str(exc)) from None
    return parse_json(path.read_bytes())


def read_cache(path: Path, version: int, key: str) -> dict[str, Any]:
    """The ``key`` object of a cache file written as ``{"version": version, key: {...}}``;
    ``{}`` when the file is missing, unreadable, not JSON, others' to write, of another
    version or of another shape (a cache is only ever a shortcut: what it lacks is asked
    again)."""
    try:
        data = cached_json(path)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != version:
        return {}
    found = data.get(key)
    return found if isinstance(found, dict) else {}


def write_cache(path: Path, version: int, key: str, value: dict[str, Any]) -> None:
    """Write the cache file :func:`read_cache` reads, ``{"version": version, key: value}``, as
    :func:`write_private` does: one line of JSON, each object's keys in the order they came
    (a tool's schema is sent as the tool wrote it, from the cache too: the same bytes on
    every turn), made without importing ``json`` (5 M instructions; a warm start-up whose
    tools changed writes the snapshot)."""
    write_private(path, [dumps({"version": version, key: value})])


def write_private_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path``, as :func:`write_private` does."""
    import json  # lazy: a warm `ikigai tool list` writes nothing

    write_private(path, [json.dumps(data, indent=1)])


def write_private(path: Path, chunks: Iterable[str]) -> None:
    """Write ``chunks`` to ``path`` user-only (0600) and atomically (temp file + rename): on
    any failure (of a chunk's maker too) the old file is intact, no temp file is left, and
    a write error is one :class:`WriteError` (``cannot write PATH: No space left on
    device``)."""
    try:
        ensure_private_dir(path.parent)
        fd, tmp = _new_beside(path)
    except OSError as exc:
        raise WriteError(path, exc) from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for chunk in chunks:
                f.write(chunk)
        os.replace(tmp, path)
    except BaseException as exc:
        os.unlink(tmp)
        if isinstance(exc, OSError):
            raise WriteError(path, exc) from exc
        raise


_TEMP_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
TEMP_NAME_TRIES = 100


def _new_beside(path: Path) -> tuple[int, str]:
    """A new empty user-only file in ``path``'s folder, ``.NAME.RANDOM.tmp``, and its name,
    made as ``tempfile.mkstemp`` makes one (a name no one has, never through a symlink):
    importing ``tempfile``, with ``shutil`` and ``random``, cost more than the write (the
    start-up ledger)."""
    for _ in range(TEMP_NAME_TRIES):
        tmp = os.path.join(path.parent, f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, _TEMP_FLAGS, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(path.parent))


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
