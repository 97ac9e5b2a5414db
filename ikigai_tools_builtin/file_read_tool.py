"""``file-read-tool``: read a file, whole or by lines (``offset`` 1-based, ``limit`` lines)."""

from __future__ import annotations

import os

from ikigai_toolkit.protocol import InvalidInput
from ikigai_tools_builtin._budget import Capture, Text, budget
from ikigai_tools_builtin._fs import open_regular, os_failure, read_all
from ikigai_tools_builtin._protocol import run_tool

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

SCHEMA = {
    "name": "file_read",
    "description": "Read contents of a file",
    "parameters": {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "Absolute or relative path to file"},
            "offset": {
                "type": "integer",
                "description": "Line number to start reading from (1-based)",
            },
            "limit": {"type": "integer", "description": "Number of lines to read"},
        },
        "required": ["file_path"],
    },
}
CHUNK = 1 << 20


def handle(args: dict) -> dict:
    """Read ``args["file_path"]``; FIFOs, devices and directories are refused, never opened."""
    path = args["file_path"]
    offset, limit = args.get("offset"), args.get("limit")
    if limit is not None and limit < 0:
        raise InvalidInput(f"field 'limit' must not be negative, got {limit}")
    first = max(offset or 1, 1)
    fd, problem = open_regular(path)
    if fd is None:
        return problem  # type: ignore[return-value]
    try:
        if offset is None and limit is None:
            text = _read_whole(fd, budget())
        else:
            text = _read_lines(fd, first, limit, budget())
    except OSError as exc:
        return os_failure(exc, path, "READ_FAILED")
    finally:
        os.close(fd)
    text.resume = _resume_from(first)
    return {"output": text}


def _resume_from(first: int) -> Callable[[str], str]:
    """The truncation hint for text starting at line ``first``: where to continue reading."""

    def hint(head: str) -> str:
        return f"; to read on, call file_read with offset={first + head.count(chr(10))}"

    return hint


def _read_whole(fd: int, limit: int | None) -> Text:
    """The whole file; with a budget only its first and last ``limit`` bytes are read."""
    size = os.fstat(fd).st_size
    if limit is None or size <= 2 * limit:
        data = read_all(fd)
        return Text(data.decode("utf-8", "replace"), total_bytes=len(data))
    head = os.pread(fd, limit, 0)
    tail = os.pread(fd, limit, size - limit)
    return Text(head.decode("utf-8", "replace"), tail.decode("utf-8", "replace"), size)


def _read_lines(fd: int, first: int, count: int | None, limit: int | None) -> Text:
    """Lines ``first``.. (``count`` of them, or to the end), streamed in bounded memory."""
    capture = Capture(limit)
    skip = first - 1
    while count != 0:
        chunk = os.read(fd, CHUNK)
        if not chunk:
            break
        if skip:
            seen = chunk.count(b"\n")
            if seen < skip:
                skip -= seen
                continue
            chunk = chunk[_nth_newline(chunk, skip) + 1 :]
            skip = 0
        if count is not None:
            seen = chunk.count(b"\n")
            if seen >= count:
                capture.feed(chunk[: _nth_newline(chunk, count) + 1])
                break
            count -= seen
        capture.feed(chunk)
    return Text.from_capture(capture)


def _nth_newline(data: bytes, n: int) -> int:
    """Index of the ``n``-th (1-based) newline in ``data``, which holds at least ``n``."""
    index = -1
    for _ in range(n):
        index = data.index(b"\n", index + 1)
    return index


def main() -> None:
    """Console script entry point."""
    run_tool(SCHEMA, handle)
