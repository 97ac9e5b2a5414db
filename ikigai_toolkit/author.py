"""Write an ikigai tool as one typed Python function (stdlib only).

::

    #!/usr/bin/env python3
    from ikigai_toolkit import tool

    @tool
    def shout(text: str, times: int = 1) -> dict:
        '''Upper-case TEXT.

        :param text: what to shout.
        :param times: how many times.
        '''
        return {"output": " ".join([text.upper()] * times)}

Run as a script, ``@tool`` speaks the protocol of docs/tools.md and exits: ``--schema``
prints the JSON Schema built from the signature (``str``, ``int``, ``float``, ``bool``,
``dict``, ``list[X]``, ``Literal[...]``, ``Optional[X]``/``X | None``, defaults) and the
docstring (its first paragraph is the description; ``:param NAME:`` lines or a Google
``Args:`` section describe the parameters); ``--help`` prints the usage. Otherwise it
reads one JSON object on stdin, checks it against that schema, calls the function and
prints its result: a ``dict`` as it is, anything else as ``{"output": value}``. A bad
argument exits 1 with one line on stderr (``shout: missing required field 'text'``);
:class:`ToolError` becomes the operation-error object ``{"error", "error_code"}`` (exit 0).
Imported by another module (a test), the decorated function is returned unchanged, with
``.schema`` and ``.main()`` attached.
"""

from __future__ import annotations

import sys

from ikigai_toolkit.jsonio import dumps, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

_SIMPLE = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object",
           list: "array"}
_PYTHON = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
           "object": (dict,), "array": (list,)}
_ARTICLE = {"integer": "an integer", "object": "an object", "array": "an array"}


class ToolError(Exception):
    """An operation error the tool reports as data: ``{"error": message, "error_code":
    code}`` on stdout, exit 0 (a file that is missing, a service that said no)."""

    def __init__(self, message: str, code: str = "ERROR") -> None:
        super().__init__(message)
        self.code = code


class InvalidInput(Exception):
    """The arguments cannot be used: exit 1 with this one-line message on stderr."""


def _origin(annotation: Any) -> str:
    """``list``, ``dict``, ``Union`` or ``Literal`` for a generic annotation, else ``""``
    (read from the object, so that this module need not import ``typing``)."""
    if type(annotation).__name__ == "UnionType":  # X | None
        return "Union"
    origin = getattr(annotation, "__origin__", None)
    if origin in (list, dict):
        return str(origin.__name__)
    return str(origin).removeprefix("typing.") if origin is not None else ""


def type_schema(annotation: Any) -> dict[str, Any]:
    """The JSON Schema of one annotation.

    :raises TypeError: an annotation JSON cannot carry (a class, a set, a union of two types).
    """
    if annotation in _SIMPLE:
        return {"type": _SIMPLE[annotation]}
    origin = _origin(annotation)
    args: tuple[Any, ...] = getattr(annotation, "__args__", ())
    if origin == "list":
        return {"type": "array", "items": type_schema(args[0])}
    if origin == "dict":
        return {"type": "object", "additionalProperties": type_schema(args[1])}
    if origin == "Literal":
        kinds = {_SIMPLE.get(type(value), "") for value in args}
        enum: dict[str, Any] = {"enum": list(args)}
        return {"type": kinds.pop(), **enum} if len(kinds) == 1 else enum
    real = [arg for arg in args if arg is not type(None)]
    if origin == "Union" and len(real) == 1:
        return type_schema(real[0])
    raise TypeError(f"cannot describe {annotation!r} in JSON Schema; use str, int, float, bool, "
                    "dict, list[X], Literal[...] or Optional[X]")


def _is_optional(annotation: Any) -> bool:
    return _origin(annotation) == "Union" and type(None) in annotation.__args__


def docstring_parts(doc: str | None) -> tuple[str, dict[str, str]]:
    """The description (the first paragraph) and each parameter's text, from a docstring
    with ``:param NAME: text`` lines or a Google-style ``Args:`` section."""
    lines = [line.strip() for line in (doc or "").strip().splitlines()]
    head = [] if not lines else lines[: next(
        (i for i, line in enumerate(lines) if not line or line.startswith(":") or line.endswith(
            ":")), len(lines))]
    description = " ".join(head)
    params: dict[str, str] = {}
    in_args = False
    last = ""
    for line in lines:
        if line.startswith(":param "):
            name, _, text = line[len(":param "):].partition(":")
            last = name.split()[-1]
            params[last] = text.strip()
        elif line in ("Args:", "Arguments:", "Parameters:"):
            in_args = True
        elif in_args and ":" in line and line.split(":")[0].split(" (")[0].isidentifier():
            name, _, text = line.partition(":")
            last = name.split(" (")[0]
            params[last] = text.strip()
        elif line and last and not line.startswith(":") and not line.endswith(":"):
            params[last] += " " + line
        else:
            last, in_args = "", in_args and bool(line)
    return description, params


def build_schema(function: Callable[..., Any]) -> dict[str, Any]:
    """The tool schema (``name``, ``description``, ``parameters``) of a typed function.

    :raises TypeError: a parameter without an annotation, or one JSON cannot carry.
    """
    code = function.__code__
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    positional = function.__defaults__ or ()
    defaults = dict(zip(names[code.co_argcount - len(positional):code.co_argcount], positional,
                        strict=True))
    defaults.update(function.__kwdefaults__ or {})
    description, docs = docstring_parts(function.__doc__)
    properties: dict[str, Any] = {}
    required = []
    for name in names:
        annotation = function.__annotations__.get(name)
        if annotation is None:
            raise TypeError(f"{function.__name__}: parameter {name!r} needs a type annotation")
        if isinstance(annotation, str):  # from __future__ import annotations
            annotation = eval(annotation, function.__globals__)  # noqa: S307 (the author's code)
        prop = type_schema(annotation)
        if name in docs:
            prop["description"] = docs[name]
        if name in defaults and defaults[name] is not None:
            prop["default"] = defaults[name]
        if name not in defaults and not _is_optional(annotation):
            required.append(name)
        properties[name] = prop
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    return {"name": function.__name__, "description": description or function.__name__,
            "parameters": parameters}


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
    """The keyword arguments for the function, from the JSON object on stdin.

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
    """What ``--help`` prints."""
    program = schema["name"].replace("_", "-") + "-tool"
    return (f"usage: {program} [--schema] < ARGUMENTS.json\n{schema['description']}\n"
            "Reads one JSON object of arguments on stdin and prints one JSON object on stdout;\n"
            "--schema prints the JSON schema of the arguments.\n")


def run(function: Callable[..., Any], schema: dict[str, Any], argv: list[str]) -> int:
    """One invocation of the tool on ``argv``, stdin and stdout; the exit status."""
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
        result = function(**parse_arguments(sys.stdin.buffer.read(), schema))
    except InvalidInput as exc:
        sys.stderr.write(f"{name}: {exc}\n")
        return 1
    except ToolError as exc:
        result = {"error": str(exc), "error_code": exc.code}
    answer = result if isinstance(result, dict) else {"output": result}
    sys.stdout.buffer.write(dumps(answer).encode("utf-8", "replace"))
    sys.stdout.flush()
    return 0


def tool(function: Callable[..., Any]) -> Callable[..., Any]:
    """Make a typed function an ikigai tool: run as a script, answer this invocation and
    exit; imported, return the function with ``.schema`` and ``.main()``."""
    schema = build_schema(function)

    def main() -> NoReturn:
        sys.exit(run(function, schema, sys.argv[1:]))

    function.schema = schema  # type: ignore[attr-defined]
    function.main = main  # type: ignore[attr-defined]
    if function.__module__ == "__main__":
        main()
    return function
