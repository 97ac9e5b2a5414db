"""Example ikigai plugin: a long-lived tool (a ``ToolCandidate`` with a ``runner``).

``python_session`` runs Python code in one interpreter the plugin keeps alive, so a
variable set by one call is there in the next (as a notebook kernel, an MCP server or a
browser keeps its state). The executor still validates the arguments, calls the
lifecycle hooks, enforces the timeout and the output budget, and builds the envelope;
after a timeout the session is killed and the next call starts a fresh one.
"""

from __future__ import annotations

from typing import Any

from ikigai_core import ToolCandidate, ToolScan, hookimpl

NAME = "python_session"
SCHEMA: dict[str, Any] = {
    "name": NAME,
    "description": "Run Python code in a session that keeps its variables between calls; "
                   "what it prints is returned.",
    "parameters": {"type": "object", "properties": {"code": {"type": "string"}},
                   "required": ["code"], "additionalProperties": False},
}


class SessionSource:
    """The one session tool; the interpreter starts on the first call, not at discovery."""

    name = "session"
    precedence = 5

    def scan(self) -> ToolScan:
        """One candidate with its schema and its runner; nothing is run."""
        from ikigai_example_session.session import SESSION

        return ToolScan([ToolCandidate(NAME, SESSION.command, schema=SCHEMA,
                                       runner=SESSION)])


@hookimpl
def ikigai_tool_sources() -> list[SessionSource]:
    """This plugin's only source."""
    return [SessionSource()]
