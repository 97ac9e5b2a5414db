"""``glob-tool``: list the files matching a glob pattern; ``**`` matches any depth.

Only files are listed (regular files and symlinks to them), sorted bytewise, as ``path/pattern``
would spell them. Within an output budget (``IKIGAI_MAX_OUTPUT_BYTES``) only the start and the
end of the sorted list are kept while the files are found, so memory stays bounded; ``count``
and ``truncated.total_bytes`` still count every file. Wildcards never match a leading dot,
``**`` never enters hidden directories nor follows symlinked ones, so symlink loops end.
"""

from __future__ import annotations

import os
from operator import methodcaller

from ikigai_toolkit.install import processors
from ikigai_tools_builtin._budget import Ends, budget
from ikigai_tools_builtin._posix import PatternError, glob_part, has_magic, unescape
from ikigai_tools_builtin._protocol import run_tool
from ikigai_tools_builtin._walk import entries, is_dir, is_file, join

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeAlias

    Part: TypeAlias = "str | Name"  # ANY_DEPTH, a literal name, or a wildcard name
    Scan: TypeAlias = "Callable[[str, list[str], list[str] | Ends], None]"

SCHEMA = {
    "name": "glob",
    "description": "Find files matching a glob pattern",
    "parameters": {
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Glob pattern (e.g., '*.txt', 'src/**/*.c')",
            },
            "path": {
                "type": "string",
                "description": "Directory to search in (default: current directory)",
            },
        },
        "required": ["pattern"],
    },
}
ANY_DEPTH = "**"
SHARE_AT = 256
"""Directories waiting to be listed when a ``**`` walk is shared with a second process."""


def _error(message: str, code: str) -> dict:
    """An error object."""
    return {"error": message, "error_code": code}


def handle(args: dict) -> dict:
    """Expand ``args["pattern"]`` under ``args["path"]`` (default: the current directory)."""
    pattern, base = args["pattern"], args.get("path") or ""
    if base and not pattern.startswith("/"):
        pattern = base.rstrip("/") + "/" + pattern
    try:
        parts = _compile(pattern)
    except PatternError:
        return _error("Invalid glob pattern", "INVALID_PATTERN")
    if base and os.path.isdir(base) and not os.access(base, os.R_OK | os.X_OK):
        return _error("Read error during glob", "READ_ERROR")
    start, limit = "/" if pattern.startswith("/") else "", budget()
    try:
        if limit is None:
            found: list[str] = []
            _expand(start, parts, found)
            found.sort()  # code point order is UTF-8 byte order
            return {"output": "\n".join(found), "count": len(found)}
        ends = Ends(limit)  # within a budget: only what can be shown is kept
        _expand(start, parts, ends)
    except MemoryError:
        return _error("Out of memory during glob", "OUT_OF_MEMORY")
    return {"output": ends.text(), "count": ends.count}


class Name:
    """A component with wildcards: :meth:`matcher`, and ``suffix`` when it is ``*<plain text>``."""

    __slots__ = ("part", "suffix", "_match")

    def __init__(self, part: str) -> None:
        self.part = part
        plain = part[1:]
        simple = part.startswith("*") and plain and not has_magic(plain) and "\\" not in plain
        self.suffix = plain if simple else None
        # A plain suffix cannot be invalid: its regex (and ``re``) waits until one is needed.
        self._match = None if simple else _compiled(part)

    def matcher(self) -> Callable[[str], object]:
        """Whether a name matches the component."""
        if self._match is None:
            self._match = _compiled(self.part)
        return self._match

    def visible_match(self) -> Callable[[str], object]:
        """A faster :meth:`matcher` that may accept hidden names: the caller skips those."""
        return self.matcher() if self.suffix is None else methodcaller("endswith", self.suffix)


def _compiled(part: str) -> Callable[[str], object]:
    """The full match of the name pattern ``part``.

    :raises PatternError: an unterminated bracket.
    """
    import re

    return re.compile(glob_part(part)).fullmatch


def _compile(pattern: str) -> list[Part]:
    """Split ``pattern`` into components: ``**``, literal names, or compiled name matchers.

    :raises PatternError: an empty pattern, a NUL character, or an unterminated bracket.
    """
    if not pattern or "\0" in pattern:
        raise PatternError("empty pattern or NUL character")
    parts: list[Part] = []
    for part in pattern.split("/"):
        if not part or (part == ANY_DEPTH and parts[-1:] == [ANY_DEPTH]):
            continue
        if part == ANY_DEPTH:
            parts.append(ANY_DEPTH)
        elif has_magic(part):
            parts.append(Name(part))
        else:
            parts.append(unescape(part))
    if parts[-1:] == [ANY_DEPTH]:
        parts.append(Name("*"))
    return parts


def _expand(start: str, parts: list[Part], found: list[str] | Ends) -> None:
    """Add every file matching ``parts`` below ``start`` to ``found``, each once."""
    pending: list[tuple[str, int]] = [(start, 0)]
    # Two ``**`` can reach one directory at one part by two routes: it is expanded once.
    seen: set[tuple[str, int]] | None = set() if parts.count(ANY_DEPTH) > 1 else None
    while pending:
        directory, index = pending.pop()
        if seen is not None:
            if (directory, index) in seen:
                continue
            seen.add((directory, index))
        if parts[index] is not ANY_DEPTH:
            _step(directory, index, parts, None, found, pending)
        elif index + 2 == len(parts) and isinstance(parts[-1], Name):
            _files_below(directory, index, parts[-1].visible_match(), found, seen)
        else:
            listing = entries(directory)
            _step(directory, index + 1, parts, listing, found, pending)
            for entry in listing:
                if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
                    pending.append((join(directory, entry.name), index))


def _files_below(
    start: str,
    index: int,
    match: Callable[[str], object],
    found: list[str] | Ends,
    seen: set[tuple[str, int]] | None,
) -> None:
    """``**/<name pattern>``: the matching files in ``start`` and every directory below it (the
    common case, kept fast). Directories already in ``seen`` at ``index`` are not entered again;
    without ``seen``, a big walk is shared with a second process (:func:`_in_two`)."""

    def scan(directory: str, pending: list[str], found: list[str] | Ends) -> None:
        prefix = join(directory, "")
        try:
            with os.scandir(directory or ".") as listing:
                for entry in listing:
                    name = entry.name
                    if name[0] == ".":
                        continue
                    if match(name) and (entry.is_file(follow_symlinks=False) or is_file(entry)):
                        found.append(prefix + name)
                    elif entry.is_dir(follow_symlinks=False):
                        path = prefix + name
                        if seen is not None:
                            if (path, index) in seen:
                                continue
                            seen.add((path, index))
                        pending.append(path)
        except OSError:
            return

    pending = [start]
    if seen is None and processors() > 1:
        listed = 0  # breadth first, until enough directories wait to be shared
        while listed < len(pending) < listed + SHARE_AT:
            scan(pending[listed], pending, found)
            listed += 1
        del pending[:listed]
        if pending:
            _in_two(pending, scan, found)
            return
    _depth_first(pending, scan, found)


def _depth_first(pending: list[str], scan: Scan, found: list[str] | Ends) -> None:
    """List the directories in ``pending`` and every one ``scan`` finds below them."""
    while pending:
        scan(pending.pop(), pending, found)


def _in_two(pending: list[str], scan: Scan, found: list[str] | Ends) -> None:
    """Walk every other directory of ``pending`` (and below) in a forked child, the rest here.

    Listing a directory is mostly the kernel's work (``openat``, ``getdents64``, ``close``),
    which two threads cannot share under the GIL but two processes can. The child sends the
    files it found through a pipe (within a budget, only the ends it kept, with its counts);
    if it cannot start or fails, its half is walked here.
    """
    theirs = pending[1::2]
    del pending[1::2]
    reader, writer = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        pid = None
    if pid == 0:  # the child: its half, sent back; it leaves without any clean-up
        status = 1
        try:
            os.close(reader)
            mine: list[str] | Ends = Ends(found.limit) if isinstance(found, Ends) else []
            _depth_first(theirs, scan, mine)
            _send(writer, mine)
            status = 0
        finally:
            os._exit(status)
    os.close(writer)
    sent = None
    try:
        _depth_first(pending, scan, found)
        if pid is not None:
            with open(reader, "rb", closefd=False) as pipe:
                sent = pipe.read()
    finally:
        os.close(reader)  # a child still writing gets EPIPE and exits
        if pid is not None and os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0:
            sent = None
    if sent is None:
        _depth_first(theirs, scan, found)
    else:
        _receive(sent, found)


def _send(fd: int, found: list[str] | Ends) -> None:
    """Write ``found`` to ``fd``: a ``COUNT TOTAL`` line, then the paths, NUL-separated."""
    lines, count, total = ((found.kept(), found.count, found.total) if isinstance(found, Ends)
                           else (found, len(found), 0))
    data = b"%d %d\n" % (count, total) + "\0".join(lines).encode("utf-8", "surrogateescape")
    with open(fd, "wb") as pipe:
        pipe.write(data)


def _receive(data: bytes, found: list[str] | Ends) -> None:
    """Add to ``found`` what :func:`_send` wrote."""
    head, _, body = data.partition(b"\n")
    count, total = map(int, head.split())
    lines = body.decode("utf-8", "surrogateescape").split("\0") if body else []
    if isinstance(found, Ends):
        found.absorb(lines, count, total)
    else:
        found += lines


def _step(
    directory: str,
    index: int,
    parts: list[Part],
    listing: list[os.DirEntry] | None,
    found: list[str] | Ends,
    pending: list[tuple[str, int]],
) -> None:
    """Match component ``index`` in ``directory``: files go to ``found``, dirs to ``pending``."""
    part, last = parts[index], index == len(parts) - 1
    if part is ANY_DEPTH:
        pending.append((directory, index))
    elif isinstance(part, str):
        path = join(directory, part)
        if not last:
            pending.append((path, index + 1))
        elif os.path.isfile(path):
            found.append(path)
    else:
        match = part.matcher()
        for entry in entries(directory) if listing is None else listing:
            if not match(entry.name):
                continue
            if last:
                if is_file(entry):
                    found.append(join(directory, entry.name))
            elif is_dir(entry):
                pending.append((join(directory, entry.name), index + 1))


def main() -> None:
    """Console script entry point."""
    run_tool(SCHEMA, handle)
