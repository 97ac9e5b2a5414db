"""``grep-tool``: search files below a directory for a POSIX extended regular expression.

Recursive; skips hidden files and directories, symlinks, special files, files ignored by
``.gitignore``, binary files (a NUL byte in the first 8 KiB) and anything unreadable.
Output lines are ``file:LINE: text``, sorted by file then line.

Two engines give the same answer: ripgrep (see :mod:`._ripgrep`) when it is installed and can
run the search, else the Python reference below. With an output budget
(``IKIGAI_MAX_OUTPUT_BYTES``) memory stays bounded: once the sorted output is known to exceed
it (``rg`` is then stopped), the files are listed (by ``rg --files`` when it can) and only those
at the start and at the end of the list are searched, until each end holds the budget, so
``count`` and ``truncated.total_bytes`` then count the lines seen: lower bounds.
"""

from __future__ import annotations

import os

from ikigai_tools_builtin import _ripgrep
from ikigai_tools_builtin._budget import Escaped, Lines, Text, budget, joined
from ikigai_tools_builtin._gitignore import Active, Rules, ancestors, ignored
from ikigai_tools_builtin._posix import PatternError, ere, glob_part, glob_path
from ikigai_tools_builtin._protocol import run_tool
from ikigai_tools_builtin._walk import entries, join

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

SCHEMA = {
    "name": "grep",
    "description": "Search for pattern in files using regular expressions",
    "parameters": {
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Regular expression pattern (POSIX extended)",
            },
            "glob": {"type": "string", "description": "Glob pattern to filter files (e.g., '*.c')"},
            "path": {
                "type": "string",
                "description": "Directory to search in (default: current directory)",
            },
        },
        "required": ["pattern"],
    },
}
BLOCK = 1 << 20  # files are searched in blocks of this size, cut at a line end
BINARY_PROBE = 8192


def handle(args: dict) -> dict:
    """Search ``args["path"]`` (default: the current directory) for ``args["pattern"]``."""
    pattern = args["pattern"]
    wanted = _file_filter(args.get("glob") or "")
    base = args.get("path") or "."  # seed 001: an empty path is the current directory
    limit = budget()
    rg = _ripgrep.binary() if os.path.isdir(base) else None
    flags = _ripgrep.rules(base) if rg is not None else None
    if rg is not None and flags is not None:
        found = _fast(rg, flags, pattern, base, wanted, limit)
        if found is not None:
            return {"output": found[0], "count": found[1]}
    try:
        search = _compiled(pattern)
    except PatternError as exc:
        return {"error": f"Invalid pattern: {exc}", "error_code": "INVALID_PATTERN"}
    if not os.path.isdir(base):
        return _result([base] if os.path.isfile(base) else [], search, limit)
    if rg is not None and flags is not None:
        listed = _ripgrep.files(rg, flags, base, wanted)  # for Python to search, or its ends
        if listed is not None:
            return _result(listed, search, limit)
    return _result(sorted(_walk(base, wanted)), search, limit)


def _compiled(pattern: str) -> Callable:
    """The Python engine's search for ``pattern``. ``re`` is imported here, not at start-up:
    ripgrep's path needs none (and an invalid pattern, which ripgrep refuses, comes here).

    :raises PatternError: the pattern is invalid; the message says why.
    """
    import re

    try:
        return re.compile(ere(pattern), re.MULTILINE).search
    except re.error as exc:
        raise PatternError(str(exc)) from exc


def _fast(rg: str, flags: tuple[str, ...], pattern: str, base: str,
          wanted: Callable[[str, str], bool] | None,
          limit: int | None) -> tuple[Escaped, int] | None:
    """Every output line, found by ripgrep; ``None`` when Python must search (see ``_ripgrep``),
    or say what is wrong with the pattern."""
    try:
        regex = ere(pattern, rust=True)
        return _ripgrep.search(rg, flags, regex, base, wanted, limit,
                               lambda path: _lines(path, _compiled(pattern)))
    except PatternError:  # Unsupported, or invalid
        return None


def _result(files: list[str], search: Callable, limit: int | None) -> dict:
    """Search ``files`` in order; within ``limit`` bytes only the start and the end."""
    if limit is None:
        found = [line for path in files for line in _lines(path, search)]
        return {"output": "\n".join(found), "count": len(found)}
    front = Lines(limit)
    done = len(files)
    for index, path in enumerate(files):
        for line in _lines(path, search):
            front.add(line)
        if front.full:
            done = index + 1
            break
    back: list[Lines] = []
    end = len(files)
    while end > done and sum(part.total for part in back) < limit:
        end -= 1
        part = Lines(limit)
        for line in _lines(files[end], search):
            part.add(line)
        back.insert(0, part)
    text: Text = joined(front, back, end > done)
    return {"output": text, "count": front.count + sum(part.count for part in back)}


def _lines(path: str, search: Callable) -> Iterator[str]:
    """The output lines for ``path``."""
    for number, text in _matches(path, search):
        yield f"{path}:{number}: {text}"


def _file_filter(pattern: str) -> Callable[[str, str], bool] | None:
    """``wanted(name, rel)``: a glob without ``/`` tests the name, with ``/`` the relative path.

    ``None`` when there is no glob: every file is wanted.
    """
    if not pattern:
        return None
    import re

    try:
        if "/" in pattern:
            match = re.compile(glob_path(pattern.lstrip("/"))).fullmatch
            return lambda name, rel: match(rel) is not None
        match = re.compile(glob_part(pattern, hidden_literal=False)).fullmatch
    except PatternError:
        return lambda name, rel: False
    return lambda name, rel: match(name) is not None


def _walk(base: str, wanted: Callable[[str, str], bool] | None) -> Iterator[str]:
    """Every file to search below ``base``, spelled ``base/relative/path``."""
    pending: list[tuple[str, str, Active]] = [("", base, ancestors(base))]
    while pending:
        rel_dir, directory, active = pending.pop()
        listing = entries(directory)
        if any(entry.name == ".gitignore" for entry in listing):
            rules = Rules.load(directory)
            if rules:
                active = active + [(rules, len(rel_dir), "")]
        for entry in listing:
            name = entry.name
            if name.startswith("."):
                continue
            rel = rel_dir + name
            if entry.is_dir(follow_symlinks=False):
                if not (active and ignored(rel, True, active)):
                    pending.append((rel + "/", join(directory, name), active))
            elif entry.is_file(follow_symlinks=False) and (wanted is None or wanted(name, rel)):
                if not (active and ignored(rel, False, active)):
                    yield join(directory, name)


def _matches(path: str, search: Callable) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of each matching line of ``path``; nothing for binary files."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return
    try:
        before = 0  # lines in the blocks already searched
        for block, more in _blocks(fd):
            text = block.decode("utf-8", "surrogateescape")  # see _posix: bad bytes never match
            for number, line in _search_block(text, search):
                yield before + number, _shown(line)
            if more:
                before += block.count(b"\n")
    except OSError:
        return
    finally:
        os.close(fd)


def _shown(line: str) -> str:
    """``line`` as printed: bytes that are not UTF-8 become U+FFFD, as ``decode`` replaces."""
    if line.isascii():
        return line
    return line.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _blocks(fd: int) -> Iterator[tuple[bytes, bool]]:
    """``(block, more to come)``: the file in blocks ending at a line end; none if it is binary."""
    size = os.fstat(fd).st_size
    carry = b""
    first = True
    while True:
        want = BLOCK if size >= BLOCK else size + 1  # one byte more than expected shows the end
        data = os.read(fd, want)
        if first and b"\0" in data[:BINARY_PROBE]:
            return
        first = False
        if len(data) < want:
            if carry or data:
                yield carry + data, False
            return
        data = carry + data
        cut = data.rfind(b"\n") + 1
        carry = data[cut:]
        if cut:
            yield data[:cut], True


def _search_block(text: str, search: Callable) -> Iterator[tuple[int, str]]:
    """``(line number in text, line)`` of each line of ``text`` where ``search`` finds a match."""
    last = len(text) - 1 if text.endswith("\n") else len(text)  # the last position on a line
    pos = counted = 0
    number = 1
    while text and pos <= last:
        found = search(text, pos)
        if not found or found.start() > last:
            return
        start = text.rfind("\n", 0, found.start()) + 1
        end = text.find("\n", found.start())
        if end < 0:
            end = len(text)
        number += text.count("\n", counted, start)
        counted = start
        yield number, text[start:end]
        pos = end + 1


def main() -> None:
    """Console script entry point."""
    run_tool(SCHEMA, handle)
