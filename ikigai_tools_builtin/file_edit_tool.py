"""``file-edit-tool``: replace exact text in a file, atomically and under a lock."""

from __future__ import annotations

import os

from ikigai_tools_builtin._fs import Refused, lock, os_failure, read_all, write_atomic
from ikigai_tools_builtin._protocol import run_tool

SCHEMA = {
    "name": "file_edit",
    "description": (
        "Edit a file by replacing exact text matches. You must read the file before editing."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "Absolute or relative path to file"},
            "old_string": {"type": "string", "description": "Exact text to find and replace"},
            "new_string": {"type": "string", "description": "Text to replace old_string with"},
            "replace_all": {
                "type": "boolean",
                "description": "Replace all occurrences (default: false, fails if not unique)",
            },
        },
        "required": ["file_path", "old_string", "new_string"],
    },
}


def _invalid(message: str) -> dict:
    """An ``INVALID_ARG`` error object."""
    return {"error": message, "error_code": "INVALID_ARG"}


def handle(args: dict) -> dict:
    """Replace ``old_string`` by ``new_string`` in ``file_path`` (byte-exact match)."""
    path, old, new = args["file_path"], args["old_string"], args["new_string"]
    if not old:
        return _invalid("old_string cannot be empty")
    if old == new:
        return _invalid("old_string and new_string are identical")
    old_bytes, new_bytes = old.encode("utf-8", "replace"), new.encode("utf-8", "replace")
    target = os.path.realpath(path)
    try:
        fd, like = lock(target, os.O_RDWR, path)
    except Refused as exc:
        return exc.problem
    try:
        try:
            data = read_all(fd)
        except OSError as exc:
            return os_failure(exc, path, "READ_FAILED")
        found = data.count(old_bytes)
        if not args.get("replace_all"):
            if found == 0:
                return {"error": "String not found in file", "error_code": "NOT_FOUND"}
            if found > 1:
                return {
                    "error": f"String found {found} times, use replace_all to replace all",
                    "error_code": "NOT_UNIQUE",
                }
        if found:
            problem = write_atomic(target, data.replace(old_bytes, new_bytes), like, path)
            if problem:
                return problem
    finally:
        os.close(fd)
    noun = "occurrence" if found == 1 else "occurrences"
    return {
        "output": f"Replaced {found} {noun} in {os.path.basename(path)}",
        "replacements": found,
    }


def main() -> None:
    """Console script entry point."""
    run_tool(SCHEMA, handle)
