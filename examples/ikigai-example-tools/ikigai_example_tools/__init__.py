"""An ikigai plugin: a tool source whose tools are Python modules of this package.

Unlike a ``*-tool`` file in a tools directory, each tool here is run as
``python -m ikigai_example_tools.<module>`` and its schema is given in the
candidate, so discovery never asks it for ``--schema``.
"""

from __future__ import annotations

import sys

from ikigai_core import ToolCandidate, ToolScan, hookimpl
from ikigai_example_tools import word_count

PRECEDENCE = 5
"""Above the built-in tools (system, 0), below the user's (10) and the project's (20)."""


class ExampleSource:
    """The tools this package ships, with their schemas."""

    name = "example"
    precedence = PRECEDENCE

    def scan(self) -> ToolScan:
        """One candidate per module; nothing is run."""
        command = (sys.executable, "-m", word_count.__name__)
        schema = word_count.SCHEMA
        return ToolScan([ToolCandidate(schema["name"], command, schema=schema)])


@hookimpl
def ikigai_tool_sources() -> list[ExampleSource]:
    """This plugin's only source."""
    return [ExampleSource()]
