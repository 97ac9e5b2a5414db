"""What both web tools share of the tool protocol: ``--schema``, JSON arguments on stdin, one
JSON answer on stdout within ikigai's output budget, an operation error as
``{"error", "error_code"}``. Standard library only: it runs on the cache-hit path."""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


class ToolError(Exception):
    """An operation error: the answer is ``{"error": message, "error_code": code}``."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def output_budget(environ: Mapping[str, str]) -> int:
    """The bytes ikigai lets the answer have (``IKIGAI_MAX_OUTPUT_BYTES``, else 64 KiB)."""
    value = environ.get("IKIGAI_MAX_OUTPUT_BYTES", "")
    return int(value) if value.isdigit() else 64 * 1024


def dump(answer: Mapping[str, Any]) -> bytes:
    """The answer as the tool writes it."""
    return json.dumps(answer, ensure_ascii=False).encode() + b"\n"


def serve(name: str, schema: Mapping[str, Any],
          arguments: Callable[[bytes], dict[str, Any]],
          handle: Callable[[dict[str, Any], Mapping[str, str]], Mapping[str, Any]]) -> None:
    """Run the tool ``name``: ``--schema`` prints ``schema``; otherwise the arguments read
    from stdin by ``arguments`` are answered by ``handle`` (a :class:`ToolError` becomes
    the error answer); any other command-line argument is a usage error (exit 2)."""
    argv = sys.argv[1:]
    if argv == ["--schema"]:
        sys.stdout.write(json.dumps(schema, indent=2) + "\n")
        return
    if argv:
        sys.stderr.write(f"{name}: unexpected argument {argv[0]!r}\n"
                         f"usage: {name}-tool [--schema] < ARGUMENTS.json\n")
        sys.exit(2)
    try:
        result = handle(arguments(sys.stdin.buffer.read()), os.environ)
    except ToolError as exc:
        result = {"error": str(exc), "error_code": exc.code}
    sys.stdout.buffer.write(dump(result))
    sys.stdout.flush()
