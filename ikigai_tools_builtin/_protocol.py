"""The tool protocol shared by the six built-in tools.

``tool --schema`` prints the schema. Otherwise the tool reads one JSON object from stdin, prints
one JSON object on stdout and exits 0, for success and for operation errors alike
(``{"error": ..., "error_code": ...}``). An invalid invocation exits 1 with one line on stderr.
"""

from __future__ import annotations

import sys

from ikigai_toolkit.jsonio import dumps, loads
from ikigai_tools_builtin._budget import budget, dump, fit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn

_TYPES = {
    "string": (str,),
    "integer": (int,),
    "boolean": (bool,),
    "number": (int, float),
    "object": (dict,),
    "array": (list,),
}
_ARTICLE = {"integer": "an integer", "object": "an object", "array": "an array"}


class InvalidInput(Exception):
    """The arguments cannot be used: the tool exits 1 with this one-line message."""


def parse_args(raw: bytes, schema: dict) -> dict:
    """Decode and check the arguments object read from stdin.

    Types are checked for the fields ``schema`` declares; ``null`` for an optional field means
    the field is absent, and unknown fields are ignored.

    :raises InvalidInput: empty or invalid JSON, not an object, a missing or wrong-typed field.
    """
    if not raw.strip():
        raise InvalidInput("expected a JSON object on stdin, got nothing")
    try:
        args = loads(raw)
    except ValueError as exc:
        raise InvalidInput(f"invalid JSON on stdin: {exc}") from exc
    if not isinstance(args, dict):
        raise InvalidInput(f"expected a JSON object on stdin, got {type(args).__name__}")
    params = schema["parameters"]
    required = params.get("required", [])
    for name in required:
        if name not in args or args[name] is None:
            raise InvalidInput(f"missing required field '{name}'")
    checked = {}
    for name, value in args.items():
        spec = params["properties"].get(name)
        if spec is None or (value is None and name not in required):
            continue
        kind = spec.get("type")
        if kind in _TYPES and (
            not isinstance(value, _TYPES[kind]) or (kind != "boolean" and isinstance(value, bool))
        ):
            article = _ARTICLE.get(kind, f"a {kind}")
            raise InvalidInput(f"field '{name}' must be {article}, got {dumps(value)[:40]}")
        checked[name] = value
    return checked


def respond(handle: Callable[[dict], dict], args: dict) -> dict:
    """The result object of ``handle(args)``, its text cut to the output budget if one is set."""
    return fit(handle(args), budget())


def usage(schema: dict) -> str:
    """What ``tool --help`` prints: how to call the tool, and its description's first line."""
    program = schema["name"].replace("_", "-") + "-tool"
    summary = schema["description"].strip().splitlines()[0]
    return (f"usage: {program} [--schema] < ARGUMENTS.json\n{summary}\n"
            "Reads one JSON object of arguments on stdin and prints one JSON object on stdout;\n"
            "--schema prints the JSON schema of the arguments.\n")


def run_tool(schema: dict, handle: Callable[[dict], dict]) -> NoReturn:
    """Run one tool invocation on this process's argv, stdin and stdout, then exit.

    ``--schema`` prints the schema, ``--help`` (``-h``) the usage; any other argument is a
    usage error (exit 2): only a call without arguments reads stdin.
    """
    name = schema["name"]
    argv = sys.argv[1:]
    if argv == ["--schema"]:
        import json  # pretty for people; discovery asks once and keeps the answer

        sys.stdout.write(json.dumps(schema, indent=2) + "\n")
        sys.exit(0)
    if argv in (["--help"], ["-h"]):
        sys.stdout.write(usage(schema))
        sys.exit(0)
    if argv:
        sys.stderr.write(f"{name}: unexpected argument {argv[0]!r}\n{usage(schema)}")
        sys.exit(2)
    try:
        args = parse_args(sys.stdin.buffer.read(), schema)
        result = respond(handle, args)
    except InvalidInput as exc:
        sys.stderr.write(f"{name}: {exc}\n")
        sys.exit(1)
    sys.stdout.buffer.write(dump(result))
    sys.stdout.flush()
    sys.exit(0)
