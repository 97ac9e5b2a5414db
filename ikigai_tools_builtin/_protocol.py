"""The tool protocol shared by the six built-in tools (:mod:`ikigai_toolkit.protocol`).

``tool --schema`` prints the schema. Otherwise the tool reads one JSON object from stdin, prints
one JSON object on stdout and exits 0, for success and for operation errors alike
(``{"error": ..., "error_code": ...}``). An invalid invocation exits 1 with one line on stderr.
"""

from __future__ import annotations

import sys

from ikigai_toolkit.protocol import serve
from ikigai_tools_builtin._budget import budget, dump, fit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn


def respond(handle: Callable[[dict], dict], args: dict) -> dict:
    """The result object of ``handle(args)``, its text cut to the output budget if one is set."""
    return fit(handle(args), budget())


def run_tool(schema: dict, handle: Callable[[dict], dict]) -> NoReturn:
    """Run one tool invocation on this process's argv, stdin and stdout, then exit
    (:func:`ikigai_toolkit.protocol.serve`)."""
    sys.exit(serve(schema, sys.argv[1:], lambda args: dump(respond(handle, args))))
