"""``glob-tool``: list the files matching a glob pattern; ``**`` matches any depth.

Only files are listed (regular files and symlinks to them), sorted bytewise, as ``path/pattern``
would spell them. Wildcards never match a leading dot, ``**`` never enters hidden directories
nor follows symlinked ones, so symlink loops end.
"""

from __future__ import annotations

import os
import re

from ikigai_tools_builtin._posix import PatternError, glob_part, has_magic, unescape
from ikigai_tools_builtin._protocol import run_tool
from ikigai_tools_builtin._walk import entries, is_dir, is_file, join

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
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Part = str | Callable[[str], object]  # ANY_DEPTH, a literal name, or a name matcher


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
    try:
        found = sorted(_expand("/" if pattern.startswith("/") else "", parts))
    except MemoryError:
        return _error("Out of memory during glob", "OUT_OF_MEMORY")
    return {"output": "\n".join(found), "count": len(found)}


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
            parts.append(re.compile(glob_part(part)).fullmatch)
        else:
            parts.append(unescape(part))
    if parts[-1:] == [ANY_DEPTH]:
        parts.append(re.compile(glob_part("*")).fullmatch)
    return parts


def _expand(start: str, parts: list[Part]) -> set[str]:
    """All files matching ``parts`` below ``start``."""
    found: set[str] = set()
    pending: list[tuple[str, int]] = [(start, 0)]
    while pending:
        directory, index = pending.pop()
        if parts[index] is not ANY_DEPTH:
            _step(directory, index, parts, None, found, pending)
            continue
        listing = entries(directory)
        _step(directory, index + 1, parts, listing, found, pending)
        for entry in listing:
            if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
                pending.append((join(directory, entry.name), index))
    return found


def _step(
    directory: str,
    index: int,
    parts: list[Part],
    listing: list[os.DirEntry] | None,
    found: set[str],
    pending: list[tuple[str, int]],
) -> None:
    """Match component ``index`` in ``directory``: add files to ``found``, directories to ``pending``."""
    part, last = parts[index], index == len(parts) - 1
    if part is ANY_DEPTH:
        pending.append((directory, index))
    elif isinstance(part, str):
        path = join(directory, part)
        if not last:
            pending.append((path, index + 1))
        elif os.path.isfile(path):
            found.add(path)
    else:
        for entry in entries(directory) if listing is None else listing:
            if not part(entry.name):
                continue
            if last:
                if is_file(entry):
                    found.add(join(directory, entry.name))
            elif is_dir(entry):
                pending.append((join(directory, entry.name), index + 1))


def main() -> None:
    """Console script entry point."""
    run_tool(SCHEMA, handle)
