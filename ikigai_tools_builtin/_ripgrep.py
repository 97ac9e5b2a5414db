"""grep's fast path: ripgrep's ``rg`` (the ``ripgrep`` wheel), held to the reference's rules.

``rg`` walks and searches in parallel, at the speed agents are used to. The flags below make
it follow grep-tool's rules (decision 14) instead of its own: only ``.gitignore`` files count,
inside or outside a repository, and above the search root only as :func:`rules` says; every
file is read as raw bytes (no BOM sniffing, no transcoding).
Binary files: grep-tool skips a file with a NUL byte in its first 8 KiB, ripgrep one with a
NUL anywhere, and ``--debug`` makes it say where it found the NUL in each. The few files
where that is after the first 8 KiB are text to grep-tool: ``rg --text`` searches them
again. grep-tool's glob filter is applied to the paths ``rg`` reports. ``IKIGAI_RIPGREP``
names another ``rg``, or (empty) turns the fast path off. The rules hold for ripgrep 14 (the
version the project depends on); ``tests/tools/test_grep_engines.py`` runs both engines.

``rg``'s output is read from a pipe while it searches, and each file's lines are put in
grep-tool's form as they arrive, so that work overlaps the search; only sorting the files
and joining them waits for the end.
"""

from __future__ import annotations

import os
import time

from ikigai_toolkit.install import scripts_dir
from ikigai_tools_builtin._budget import Escaped, dump, escaped
from ikigai_tools_builtin._gitignore import ancestors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

ENV_VAR = "IKIGAI_RIPGREP"
RULES = (  # decision 14's walk: .gitignore files only, in or out of a repository
    "--no-config", "--no-messages", "--no-ignore-dot", "--no-ignore-exclude",
    "--no-ignore-global", "--no-ignore-parent", "--no-require-git",
)
SEARCH = (
    "--debug", "--color=never", "--no-mmap", "--encoding=none", "--line-number",
    "--with-filename", "--null", "--heading", "--field-match-separator=: ",
)
BINARY = b": found binary data at offset "  # ends rg's log line "rg: DEBUG|…: ignoring PATH…"
BINARY_PROBE = 8192  # grep-tool's rule: a NUL byte within this many bytes makes a file binary
CHUNK = 1 << 20
PAUSE = 0.001  # seconds between reads of rg's output: one wake-up per pause, not per write


def binary() -> str | None:
    """The ``rg`` to run: ``$IKIGAI_RIPGREP`` if set (empty: none), else the wheel's, if any."""
    chosen = os.environ.get(ENV_VAR)
    if chosen is not None:
        return chosen or None
    path = os.path.join(scripts_dir(), "rg")
    return path if os.access(path, os.X_OK) else None


def rules(base: str) -> tuple[str, ...] | None:
    """The flags that make ``rg`` apply grep-tool's ``.gitignore`` rules below ``base``.

    ``RULES`` do when no ``.gitignore`` above ``base`` applies. grep-tool reads those up to
    the repository's top, ripgrep its own way (up to ``/``), so one above is handed to it with
    ``--ignore-file``: its patterns are matched relative to the current directory, and rules
    in the tree win over them, as deeper files win in git. That is right when the file is in
    the current directory, the common case (a search of ``src`` from the repository's top);
    for any other ``None``: Python searches.
    """
    found = ancestors(base)
    if not found:
        return RULES
    if len(found) == 1 and os.path.abspath(found[0][2]) == os.path.abspath(base):
        return (*RULES, "--ignore-file", ".gitignore")
    return None


def search(rg: str, flags: tuple[str, ...], regex: str, base: str,
           wanted: Callable[[str, str], bool] | None, limit: int | None,
           again: Callable[[str], Iterator[str]]) -> tuple[Escaped, int] | None:
    """``(output, line count)``: the sorted ``path:LINE: text`` lines ``rg`` finds below ``base``.

    ``flags`` come from :func:`rules`. A file ripgrep took for binary but grep-tool does not
    (its first NUL is past 8 KiB) is searched again as text by ``rg --text``, or, where that
    prints a line holding a NUL, by ``again(path)``, which gives its lines.
    ``None`` when ``rg`` could not run or failed without output (the caller searches in
    Python), or when the output exceeds ``limit`` bytes (``rg`` is stopped at once: the caller
    then collects the head and the tail of the sorted output itself).
    """
    found = Found(base, wanted, limit)
    log = _stream(rg, [*flags, *SEARCH, "--regexp", regex, "--", base], found.feed)
    if log is None or not found.feed(b"\n"):  # the newline that ends the last file's lines
        return None
    late = [os.fsdecode(raw) for raw, offset in _binary(log) if offset >= BINARY_PROBE]
    as_text = _as_text(rg, regex, base, late) if late else {}
    for path in late:
        if not found.wants(path):
            continue
        if as_text is not None:
            text, count = as_text.get(path, (b"", 0))
        else:
            lines = list(again(path))
            text, count = dump("\n".join(lines))[1:-1] if lines else b"", len(lines)
        if not found.replace(path, text, count):
            return None
    return found.output(), found.count


def _as_text(rg: str, regex: str, base: str,
             paths: list[str]) -> dict[str, tuple[bytes, int]] | None:
    """``{path: (its lines, how many)}`` for ``paths`` searched as text by ``rg --text``;
    ``None`` when ``rg`` failed or printed a line holding a NUL (Python must spell it)."""
    searched = Found(base, None, None)
    log = _stream(rg, ["--no-config", "--text", *SEARCH, "--regexp", regex, "--", *paths],
                  searched.feed)
    return searched.files if log is not None and searched.feed(b"\n") else None


def _binary(log: bytes) -> Iterator[tuple[bytes, int]]:
    """``(path, offset of its first NUL)`` of each file ``rg --debug`` skipped as binary.

    The line is ``rg: DEBUG|<module>|<source location>: ignoring <path>: found binary data
    at offset <n>``; the location holds no space. (Parsed without ``re``: see ``_posix``.)
    """
    for line in log.split(b"\n"):
        head, found, offset = line.rpartition(BINARY)
        if found and offset.isdigit() and head.startswith(b"rg: DEBUG|") and head.count(b"|") >= 2:
            location, ignoring, raw = head.split(b"|", 2)[2].partition(b" ignoring ")
            if ignoring and b" " not in location:
                yield raw, int(offset)


def files(rg: str, flags: tuple[str, ...], base: str,
          wanted: Callable[[str, str], bool] | None) -> list[str] | None:
    """The files below ``base`` that grep-tool searches, sorted, as ``rg --files`` lists them
    (``flags`` from :func:`rules`).

    ``None`` when ``rg`` could not run or failed without output.
    """
    listing: list[bytes] = []
    if _stream(rg, [*flags, "--files", "--null", "--", base], listing.append) is None:
        return None
    cut = _cut(base)
    paths = map(os.fsdecode, b"".join(listing).split(b"\0")[:-1])
    return sorted(path for path in paths if _wanted(wanted, cut, path))


def _cut(base: str) -> int:
    """How much of a reported path is ``base`` and its slash."""
    return len(base) + (not base.endswith("/"))


def _wanted(wanted: Callable[[str, str], bool] | None, cut: int, path: str) -> bool:
    """Whether ``path`` passes grep's glob filter ``wanted`` (``None``: every path does);
    ``cut`` characters of it are the search root."""
    return wanted is None or bool(wanted(os.path.basename(path), path[cut:]))


class Found:
    """The output of one search, from ``rg --heading`` output fed a chunk at a time.

    Each wanted file's lines are rewritten on arrival to ``path:LINE: text`` lines, already
    escaped for JSON (:class:`Escaped`); :meth:`output` joins them in path order. ``count``
    counts the lines, ``size`` the bytes of the escaped output.
    """

    def __init__(self, base: str, wanted: Callable[[str, str], bool] | None,
                 limit: int | None) -> None:
        self.cut = _cut(base)
        self.wanted = wanted
        self.limit = limit
        self.files: dict[str, tuple[bytes, int]] = {}  # path -> (its lines, how many)
        self.count = self.size = 0
        self.rest = b""  # the start of a file's lines whose end has not arrived

    def feed(self, chunk: bytes) -> bool:
        """Take more output; False once it exceeds the limit or names a file Python must spell.

        Files are separated by an empty line; feeding ``b"\\n"`` after the output ends it.
        """
        blocks = (self.rest + chunk).split(b"\n\n")
        self.rest = blocks.pop()  # the start of a file whose end has not arrived yet
        if not blocks:
            return self._within(len(self.rest))
        raws: list[bytes] = []
        bodies: list[bytes] = []
        for block in blocks:
            raw, sep, body = block.partition(b"\0")
            if not sep or b"\n" in raw:  # a file name holding a newline: Python copes
                return False
            raws.append(raw)
            bodies.append(body)
        # Escaped together: a few passes over the chunk instead of several calls per file.
        names = escaped(b"\n".join(raws)).split(b"\n")
        texts = escaped(b"\0".join(bodies)).split(b"\0")
        if len(texts) != len(bodies):  # a NUL byte in a line: never, from rg 14
            return False
        files, wanted, cut = self.files, self.wanted, self.cut
        count = size = 0
        for raw, name, body, text in zip(raws, names, bodies, texts, strict=True):
            ascii_name = raw.isascii()
            path = raw.decode() if ascii_name else os.fsdecode(raw)
            if not _wanted(wanted, cut, path):
                continue
            if not ascii_name:  # the name as the reference engine prints it
                name = dump(path)[1:-1]
            name += b":"
            text = name + text.replace(b"\n", b"\\n" + name)
            lines = body.count(b"\n") + 1
            files[path] = text, lines  # rg reports each file once
            count += lines
            size += len(text) + 2  # 2: the escaped newline before the next file
        self.count += count
        self.size += size
        return self._within(len(self.rest))

    def wants(self, path: str) -> bool:
        """Whether ``path`` passes the glob filter."""
        return _wanted(self.wanted, self.cut, path)

    def replace(self, path: str, text: bytes, count: int) -> bool:
        """Make ``text`` (``count`` lines, escaped) the lines of ``path``: False past the limit."""
        old, old_count = self.files.pop(path, (b"", 0))
        if count:
            self.files[path] = text, count
        self.count += count - old_count
        self.size += len(text) + 2 * bool(count) - len(old) - 2 * bool(old_count)
        return self._within()

    def _within(self, pending: int = 0) -> bool:
        """Whether the output, and ``pending`` bytes more, fit in the limit."""
        return self.limit is None or self.size + pending <= self.limit

    def output(self) -> Escaped:
        """Every file's lines, in path order."""
        parts: list[bytes] = []
        for path in sorted(self.files):
            parts += (self.files[path][0], b"\\n")
        return Escaped(parts[:-1])


def _stream(rg: str, args: list[str], feed: Callable[[bytes], object]) -> bytes | None:
    """Run ``rg args``, giving ``feed`` its output as it comes; what it logged on stderr.

    ``None`` if it could not start, failed without output, or ``feed`` returned ``False``
    (stop): ``rg`` is then killed at once. Both pipes are widened (:func:`_pipe`) and read
    at most once per pause: ``rg`` writes its log a line at a time, and waking up for each
    line, or ``rg`` waiting on a full pipe, cost more than the search of a rare word.
    """
    import select

    out, out_end = _pipe()  # read ends, write ends
    log, log_end = _pipe()
    try:
        pid = _spawn([rg, *args], out_end, log_end)
    finally:
        os.close(out_end)
        os.close(log_end)
    if pid is None:
        os.close(out)
        os.close(log)
        return None
    logged = bytearray()
    poller = select.poll()
    for fd in (out, log):
        poller.register(fd, select.POLLIN)
    open_fds = 2
    fed = stopped = False
    try:
        while open_fds and not stopped:
            full = False
            for fd, _ in poller.poll():
                chunk = os.read(fd, CHUNK)
                if not chunk:
                    poller.unregister(fd)
                    open_fds -= 1
                elif fd == log:
                    logged += chunk
                else:
                    fed = True
                    stopped = feed(chunk) is False
                    full = len(chunk) == CHUNK
            if not full:
                time.sleep(PAUSE)
    except BaseException:
        stopped = True  # rg may be blocked on a full pipe: never wait for it
        raise
    finally:
        if stopped:
            import signal

            os.kill(pid, signal.SIGKILL)
        status = os.waitpid(pid, 0)[1]
        os.close(out)
        os.close(log)
    if stopped or (os.waitstatus_to_exitcode(status) not in (0, 1) and not fed):
        return None
    return bytes(logged)


def _pipe() -> tuple[int, int]:
    """A pipe that holds 1 MiB where Linux allows (64 KiB is its default)."""
    reader, writer = os.pipe()
    try:
        import fcntl

        fcntl.fcntl(writer, fcntl.F_SETPIPE_SZ, CHUNK)
    except (ImportError, AttributeError, OSError):  # not Linux, or over the user's pipe quota
        pass
    return reader, writer


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
