"""Helpers shared by file_read, file_write and file_edit: error objects, locks, atomic writes."""

from __future__ import annotations

import errno
import fcntl
import os
import stat

MESSAGES = {
    "FILE_NOT_FOUND": "File not found",
    "PERMISSION_DENIED": "Permission denied",
    "NO_SPACE": "No space left on device",
    "OPEN_FAILED": "Cannot open file",
    "READ_FAILED": "Failed to read file",
    "WRITE_FAILED": "Failed to write file",
    "SEEK_FAILED": "Cannot seek file",
    "SIZE_FAILED": "Cannot get file size",
}
_BY_ERRNO = {
    errno.ENOENT: "FILE_NOT_FOUND",
    errno.EACCES: "PERMISSION_DENIED",
    errno.EPERM: "PERMISSION_DENIED",
    errno.EROFS: "PERMISSION_DENIED",
    errno.ENOSPC: "NO_SPACE",
    errno.EDQUOT: "NO_SPACE",
}


def failure(code: str, path: str) -> dict:
    """The error object ``{"error": "<message>: <path>", "error_code": code}``."""
    return {"error": f"{MESSAGES[code]}: {path}", "error_code": code}


def os_failure(exc: OSError, path: str, fallback: str) -> dict:
    """The error object for ``exc``: its errno's code when it has one, else ``fallback``."""
    return failure(_BY_ERRNO.get(exc.errno or 0, fallback), path)


def special_failure(mode: int, path: str, code: str | None = None) -> dict | None:
    """The error object for a file that is not a regular file, else ``None``.

    Unless ``code`` says otherwise: directories cannot be opened as files, pipes and sockets
    cannot be seeked, devices have no size.
    """
    if stat.S_ISREG(mode):
        return None
    if code is None:
        if stat.S_ISDIR(mode):
            code = "OPEN_FAILED"
        elif stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            code = "SEEK_FAILED"
        else:
            code = "SIZE_FAILED"
    return failure(code, path)


def open_regular(
    path: str, flags: int = os.O_RDONLY, special: str | None = None, shown: str | None = None
) -> tuple[int | None, dict | None]:
    """Open the regular file ``path`` without ever blocking on a pipe or device.

    The file is checked before and after opening (it may be swapped in between). Returns
    ``(fd, None)``, or ``(None, error object)`` naming ``shown`` (default ``path``); ``special``
    is the code for a file that is not regular (default: see :func:`special_failure`).
    """
    shown = path if shown is None else shown
    try:
        problem = special_failure(os.stat(path).st_mode, shown, special)
        if problem:
            return None, problem
        fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return None, os_failure(exc, shown, "OPEN_FAILED")
    problem = special_failure(os.fstat(fd).st_mode, shown, special)
    if problem:
        os.close(fd)
        return None, problem
    return fd, None


def read_all(fd: int) -> bytes:
    """Read ``fd`` to its end."""
    chunks: list[bytes] = []
    size = os.fstat(fd).st_size + 1
    while True:
        chunk = os.read(fd, max(size, 1 << 16))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


class Refused(Exception):
    """The file cannot be locked for an update; carries the error object."""

    def __init__(self, problem: dict) -> None:
        super().__init__(problem["error"])
        self.problem = problem


def lock(path: str, flags: int, shown: str) -> tuple[int, os.stat_result]:
    """Open (with ``flags``, which should ask for write access) and exclusively lock ``path``.

    Returns ``(fd, its stat)``; close the fd to unlock. Errors name ``shown``, the path as the
    user gave it. When another process replaced the file while we waited, the new file is
    locked instead, so read-modify-write cycles never lose an update.

    :raises Refused: the file is missing, not a regular file, or not writable.
    """
    while True:
        fd, problem = open_regular(path, flags, "OPEN_FAILED", shown)
        if fd is None:
            raise Refused(problem or {})
        fcntl.flock(fd, fcntl.LOCK_EX)
        now = os.fstat(fd)
        try:
            current = os.stat(path)
        except FileNotFoundError:
            current = None
        if current and (current.st_ino, current.st_dev) == (now.st_ino, now.st_dev):
            return fd, now
        os.close(fd)


def write_atomic(target: str, data: bytes, like: os.stat_result | None, shown: str) -> dict | None:
    """Replace ``target`` with ``data`` atomically; returns an error object or ``None``.

    The data goes to a temporary file in the same directory, is flushed to disk, gets the mode
    and owner of ``like`` (new files: 0666 minus the umask) and is renamed over ``target``.
    On any failure the temporary file is removed and ``target`` is untouched. ``shown`` is the
    path named in error messages.
    """
    directory, name = os.path.split(target)
    temp = os.path.join(directory, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENOENT:  # the directory is missing: seed 001 says OPEN_FAILED
            return failure("OPEN_FAILED", shown)
        return os_failure(exc, shown, "OPEN_FAILED")
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if like is not None:
                _copy_owner(fd, like)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, target)
    except OSError as exc:
        _remove(temp)
        return os_failure(exc, shown, "WRITE_FAILED")
    _sync_directory(directory)
    return None


def _copy_owner(fd: int, like: os.stat_result) -> None:
    """Give ``fd`` the permission bits and, where allowed, the owner of ``like``."""
    try:
        os.fchown(fd, like.st_uid, like.st_gid)
    except PermissionError:
        pass
    os.fchmod(fd, stat.S_IMODE(like.st_mode))


def _remove(path: str) -> None:
    """Remove ``path`` if it exists."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _sync_directory(directory: str) -> None:
    """Flush a rename in ``directory`` to disk; best effort."""
    try:
        fd = os.open(directory or ".", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
