"""``file-write-tool``: create or overwrite a file atomically, keeping its mode and owner."""

from __future__ import annotations

import os

from ikigai_tools_builtin._fs import Refused, lock, write_atomic
from ikigai_tools_builtin._protocol import run_tool

SCHEMA = {
    "name": "file_write",
    "description": "Write content to a file (creates or overwrites)",
    "parameters": {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "Absolute or relative path to file"},
            "content": {"type": "string", "description": "Content to write to file"},
        },
        "required": ["file_path", "content"],
    },
}


def handle(args: dict) -> dict:
    """Write ``args["content"]`` (UTF-8) to ``args["file_path"]``; a symlink's target is written."""
    path = args["file_path"]
    data = args["content"].encode("utf-8", "replace")
    target = os.path.realpath(path)
    if not os.path.lexists(target):
        problem = write_atomic(target, data, None, path)
    else:
        try:
            fd, like = lock(target, os.O_WRONLY, path)
        except Refused as exc:
            return exc.problem
        try:
            problem = write_atomic(target, data, like, path)
        finally:
            os.close(fd)
    if problem:
        return problem
    return {"output": f"Wrote {len(data)} bytes to {os.path.basename(path)}", "bytes": len(data)}


def main() -> None:
    """Console script entry point."""
    run_tool(SCHEMA, handle)
