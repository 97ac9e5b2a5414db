"""grep's fast path: ripgrep's ``rg`` (the ``ripgrep`` wheel), held to the reference's rules.

``rg`` walks and searches in parallel, at the speed agents are used to. The flags below make
it follow grep-tool's rules (decision 14) instead of its own: only ``.gitignore`` files count,
inside or outside a repository, and none above the search root (:func:`usable` leaves those
searches to Python); every file is read as raw bytes (no BOM sniffing, no transcoding).
Binary files: grep-tool skips a file with a NUL byte in its first 8 KiB, ripgrep one with a
NUL anywhere, and ``--debug`` makes it say where it found the NUL in each. The few files
where that is after the first 8 KiB are text to grep-tool: the Python engine searches them
again. grep-tool's glob filter is applied to the paths ``rg`` reports. ``IKIGAI_RIPGREP``
names another ``rg``, or (empty) turns the fast path off. The rules hold for ripgrep 14 (the
version the project depends on); ``tests/tools/test_grep_engines.py`` runs both engines.
"""

from __future__ import annotations

import os
import re
import signal
import sysconfig

from ikigai_tools_builtin._gitignore import ancestors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

ENV_VAR = "IKIGAI_RIPGREP"
FLAGS = (
    "--no-config", "--no-messages", "--debug", "--color=never", "--no-mmap", "--encoding=none",
    "--line-number", "--with-filename", "--null", "--heading", "--field-match-separator=: ",
    "--no-ignore-dot", "--no-ignore-exclude", "--no-ignore-global", "--no-ignore-parent",
    "--no-require-git",
)
BINARY = re.compile(rb"^rg: DEBUG\|[^|]*\|[^ ]* ignoring (.*): found binary data at offset (\d+)$",
                    re.MULTILINE)
BINARY_PROBE = 8192  # grep-tool's rule: a NUL byte within this many bytes makes a file binary
CHUNK = 1 << 20


def binary() -> str | None:
    """The ``rg`` to run: ``$IKIGAI_RIPGREP`` if set (empty: none), else the wheel's, if any."""
    chosen = os.environ.get(ENV_VAR)
    if chosen is not None:
        return chosen or None
    path = os.path.join(sysconfig.get_path("scripts"), "rg")
    return path if os.access(path, os.X_OK) else None


def usable(base: str) -> bool:
    """Whether ``rg`` applies the same ``.gitignore`` rules as grep-tool below ``base``.

    Rules above the search root apply only up to the repository's top in grep-tool, while
    ripgrep reads them up to ``/``: such searches are left to Python.
    """
    return not ancestors(base)


def search(rg: str, regex: str, base: str, wanted: Callable[[str, str], bool],
           limit: int | None, again: Callable[[str], Iterator[str]]) -> tuple[str, int] | None:
    """``(output, line count)``: the sorted ``path:LINE: text`` lines ``rg`` finds below ``base``.

    ``again(path)`` gives the lines of a file ripgrep took for binary but grep-tool does not.
    ``None`` when ``rg`` could not run or failed without output (the caller searches in
    Python), or when its output exceeds ``limit`` bytes (``rg`` is stopped at once: the caller
    then collects the head and tail of the sorted output itself).
    """
    ran = _run(rg, [*FLAGS, "--regexp", regex, "--", base], limit)
    if ran is None:
        return None
    data, log = ran
    files: dict[str, tuple[bytes, bytes | None]] = {}
    for block in data[:-1].split(b"\n\n") if data else ():  # one file's lines per block
        raw, sep, body = block.partition(b"\0")
        if not sep or b"\n" in raw:  # a file name holding a newline: Python copes
            return None
        files[os.fsdecode(raw)] = raw, body
    for raw, offset in BINARY.findall(log):
        if int(offset) >= BINARY_PROBE:
            files[os.fsdecode(raw)] = raw, None
    cut = len(base) + (not base.endswith("/"))  # leaves the path relative to base
    out: list[str] = []
    count = 0
    for path in sorted(files):
        raw, maybe = files[path]
        if not wanted(os.path.basename(path), path[cut:]):
            continue
        if maybe is None or not raw.isascii():  # Python's lines, or its spelling of the name
            found = list(again(path) if maybe is None else _lines(path, maybe))
            count += len(found)
            out.extend(found)
            continue
        count += maybe.count(b"\n") + 1
        raw += b":"
        out.append((raw + maybe.replace(b"\n", b"\n" + raw)).decode("utf-8", "replace"))
    return "\n".join(out), count


def _lines(path: str, body: bytes) -> Iterator[str]:
    """The output lines of ``body`` for a file whose name is not ASCII."""
    for line in body.split(b"\n"):
        yield f"{path}:{line.decode('utf-8', 'replace')}"


def _run(rg: str, args: list[str], limit: int | None) -> tuple[bytes, bytes] | None:
    """What ``rg args`` prints on stdout and stderr.

    ``None`` if it could not start, failed without output or printed over ``limit`` bytes.
    The log (stderr) goes to a scratch file, and so does stdout without a limit: ``rg``
    writes them a line or a file at a time, and waking up for each write cost more CPU than
    the search of a rare word.
    """
    log = _scratch()
    reader, out = (_scratch(),) * 2 if limit is None else os.pipe()
    try:
        try:
            pid = _spawn([rg, *args], out, log)
        finally:
            if out != reader:
                os.close(out)
        if pid is None:
            return None
        try:
            data = _read(reader, pid, limit)
        finally:
            status = os.waitpid(pid, 0)[1]
        if data is None:
            return None
        data = data if limit is not None else _contents(reader)
        if os.waitstatus_to_exitcode(status) not in (0, 1) and not data:
            return None
        return data, _contents(log)
    finally:
        os.close(log)
        os.close(reader)


def _spawn(argv: list[str], out: int, log: int) -> int | None:
    """Start ``argv`` with stdin ``/dev/null``, stdout ``out``, stderr ``log``; its pid."""
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        return os.posix_spawn(argv[0], argv, os.environ,
                              file_actions=[(os.POSIX_SPAWN_DUP2, null, 0),
                                            (os.POSIX_SPAWN_DUP2, out, 1),
                                            (os.POSIX_SPAWN_DUP2, log, 2)])
    except OSError:
        return None
    finally:
        os.close(null)


def _read(reader: int, pid: int, limit: int | None) -> bytes | None:
    """Read the pipe ``reader`` to its end; ``None`` (and ``pid`` killed) past ``limit``.

    Without a limit ``reader`` is the scratch file ``rg`` writes: nothing to read yet.
    """
    if limit is None:
        return b""
    chunks = []
    size = 0
    while chunk := os.read(reader, CHUNK):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            os.kill(pid, signal.SIGKILL)
            return None
    return b"".join(chunks)


def _scratch() -> int:
    """A descriptor of a new, nameless file (in memory on Linux)."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("rg", os.MFD_CLOEXEC)
    import tempfile

    fd, name = tempfile.mkstemp()
    os.unlink(name)
    return fd


def _contents(fd: int) -> bytes:
    """Everything in the scratch file ``fd``."""
    os.lseek(fd, 0, os.SEEK_SET)
    with open(fd, "rb", closefd=False) as file:
        return file.read()
