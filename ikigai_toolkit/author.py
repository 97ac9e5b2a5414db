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

from ikigai_toolkit.jsonio import dumps
from ikigai_toolkit.protocol import serve

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

_SIMPLE = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object",
           list: "array"}


class ToolError(Exception):
    """An operation error the tool reports as data: ``{"error": message, "error_code":
    code}`` on stdout, exit 0 (a file that is missing, a service that said no)."""

    def __init__(self, message: str, code: str = "ERROR") -> None:
        super().__init__(message)
        self.code = code


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


def run(function: Callable[..., Any], schema: dict[str, Any], argv: list[str]) -> int:
    """One invocation of the tool on ``argv``, stdin and stdout; the exit status."""

    def answer(arguments: dict[str, Any]) -> bytes:
        try:
            result = function(**arguments)
        except ToolError as exc:
            result = {"error": str(exc), "error_code": exc.code}
        reply = result if isinstance(result, dict) else {"output": result}
        return dumps(reply).encode("utf-8", "replace")

    return serve(schema, argv, answer)


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
