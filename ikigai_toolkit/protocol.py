"""The tool side of the protocol (docs/tools.md), shared by the built-in tools and ``@tool``.

``tool --schema`` prints the schema and ``--help`` the usage; any other argument is a usage
error (exit 2). Without arguments the tool reads one JSON object on stdin, checks it against
the schema's ``parameters`` and prints one JSON object (exit 0). Arguments that cannot be
used exit 1 with one line on stderr.
"""

from __future__ import annotations

import sys

from ikigai_toolkit.jsonio import dumps, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_PYTHON = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
           "object": (dict,), "array": (list,)}
_ARTICLE = {"integer": "an integer", "object": "an object", "array": "an array"}


class InvalidInput(Exception):
    """The arguments cannot be used: exit 1 with this one-line message on stderr."""


def _check(name: str, value: Any, prop: dict[str, Any]) -> None:
    kind = prop.get("type")
    if kind in _PYTHON and (not isinstance(value, _PYTHON[kind])
                            or (kind != "boolean" and isinstance(value, bool))):
        article = _ARTICLE.get(kind, f"a {kind}")
        raise InvalidInput(f"field '{name}' must be {article}, got {dumps(value)[:40]}")
    if "enum" in prop and value not in prop["enum"]:
        choices = ", ".join(dumps(choice) for choice in prop["enum"])
        raise InvalidInput(f"field '{name}' must be one of {choices}, got {dumps(value)[:40]}")
    for index, item in enumerate(value if "items" in prop else ()):
        _check(f"{name}[{index}]", item, prop["items"])
    for key, item in (value.items() if "additionalProperties" in prop else ()):
        _check(f"{name}.{key}", item, prop["additionalProperties"])


def parse_arguments(raw: bytes, schema: dict[str, Any]) -> dict[str, Any]:
    """The arguments the schema declares, from the JSON object on stdin, checked.

    ``null`` for an optional field means "not given"; unknown fields are ignored.

    :raises InvalidInput: empty or invalid JSON, not an object, a missing or wrong field.
    """
    if not raw.strip():
        raise InvalidInput("expected a JSON object on stdin, got nothing")
    try:
        arguments = loads(raw)
    except ValueError as exc:
        raise InvalidInput(f"invalid JSON on stdin: {exc}") from None
    if not isinstance(arguments, dict):
        raise InvalidInput(f"expected a JSON object on stdin, got {type(arguments).__name__}")
    parameters = schema["parameters"]
    for name in parameters.get("required", ()):
        if arguments.get(name) is None:
            raise InvalidInput(f"missing required field '{name}'")
    given = {}
    for name, prop in parameters["properties"].items():
        if arguments.get(name) is not None:
            _check(name, arguments[name], prop)
            given[name] = arguments[name]
    return given


def usage(schema: dict[str, Any]) -> str:
    """What ``tool --help`` prints: how to call the tool, and its description's first line."""
    program = schema["name"].replace("_", "-") + "-tool"
    summary = schema["description"].strip().splitlines()[0]
    return (f"usage: {program} [--schema] < ARGUMENTS.json\n{summary}\n"
            "Reads one JSON object of arguments on stdin and prints one JSON object on stdout;\n"
            "--schema prints the JSON schema of the arguments.\n")


def serve(schema: dict[str, Any], argv: list[str],
          answer: Callable[[dict[str, Any]], bytes]) -> int:
    """One invocation of a tool on ``argv``, stdin and stdout; the exit status.

    :param answer: the bytes to print for the checked arguments; it may raise
        :class:`InvalidInput` too.
    """
    name = schema["name"]
    if argv == ["--schema"]:
        import json  # pretty for people; discovery asks once and keeps the answer

        sys.stdout.write(json.dumps(schema, indent=2) + "\n")
        return 0
    if argv in (["--help"], ["-h"]):
        sys.stdout.write(usage(schema))
        return 0
    if argv:
        sys.stderr.write(f"{name}: unexpected argument {argv[0]!r}\n{usage(schema)}")
        return 2
    try:
        out = answer(parse_arguments(sys.stdin.buffer.read(), schema))
    except InvalidInput as exc:
        sys.stderr.write(f"{name}: {exc}\n")
        return 1
    sys.stdout.buffer.write(out)
    sys.stdout.flush()
    return 0
