"""What a tool source returns, and what the registry holds."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ikigai_core.record import Record

if TYPE_CHECKING:
    import threading

    from ikigai_core.outcome import ToolOutcome

TOOL_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""Tool names every provider accepts (spec decision 3)."""

TOOL_SUFFIX = "-tool"

EMPTY: Mapping[str, Any] = MappingProxyType({})
"""The default of a record's mapping field: empty, and read-only as it is shared."""


def tool_name_from_filename(filename: str) -> str:
    """``file-read-tool`` -> ``file_read`` (spec decision 1)."""
    return filename[: -len(TOOL_SUFFIX)].replace("-", "_")


@runtime_checkable
class ToolRunner(Protocol):
    """Runs the calls of tools that live in a process a source keeps alive (an MCP session).

    A source sets it on its :class:`ToolCandidate`. The executor still
    validates the arguments, calls the lifecycle hooks, enforces the timeout (it stops
    waiting and sets ``cancelled``) and the output budget (on the JSON size of the
    result), and wraps the outcome.

    A runner may also have ``warm()``: start its process now, in the background, and
    return at once (a second call does nothing). ``chat`` calls it for every tool once
    its background discovery has found them, so the first call does not wait for a
    server to start. And ``ready(cancelled)``: start (or restart) its process before a
    call; the executor calls it first, and the call's timeout starts when it returns.
    """

    def call(
        self, tool: Tool, arguments: Mapping[str, Any], *, timeout: float,
        cancelled: threading.Event,
    ) -> ToolOutcome:
        """Run one call and say what happened (``ToolOutcome.result`` on success).

        Stop soon after ``cancelled`` is set (the executor has reported a timeout).
        """
        ...


class ToolCandidate(Record):
    """A tool a source found but whose schema may still have to be asked for.

    :param name: the tool's name (for directory tools, derived from the filename).
    :param command: the argv that runs the tool; ``--schema`` is appended to ask for its schema.
    :param path: the file behind the tool, if any; keys the schema cache.
    :param schema: the schema, when the source already knows it (no ``--schema`` call then).
    :param runner: for a tool living in a process the source keeps alive (an MCP session):
        what runs its calls instead of ``command``. Give ``schema`` with it.
    """

    name: str
    command: tuple[str, ...]
    path: Path | None = None
    schema: Mapping[str, Any] | None = None
    runner: ToolRunner | None = None


class SkippedTool(Record):
    """A tool that is not in the registry, and why.

    :param name: the tool (or file) name.
    :param source: the source that found it.
    :param reason: one line for the user: what is wrong and, where it helps, what to do.
    :param path: the file behind it, if any.
    :param kind: ``invalid`` (a broken tool), ``untrusted`` (project directory not trusted)
        or ``ignored`` (not a tool at all; shown only with ``--verbose``).
    """

    name: str
    source: str
    reason: str
    path: Path | None = None
    kind: str = "invalid"


class ToolScan(Record):
    """What one source found: candidates to ask for schemas, and what it skipped."""

    candidates: Sequence[ToolCandidate] = ()
    skipped: Sequence[SkippedTool] = ()


@runtime_checkable
class ToolSource(Protocol):
    """A place tools come from. Returned by the ``ikigai_tool_sources`` hook.

    ``name`` is shown to users (``system``, ``user``, ``project`` or the plugin's own);
    on a tool-name clash the source with the higher ``precedence`` wins
    (system 0 < user 10 < project 20).
    """

    name: str
    precedence: int

    def scan(self) -> ToolScan:
        """Find this source's tools. Runs no tool: schemas are asked for by the caller."""
        ...


def source_problem(source: Any) -> str | None:
    """What keeps ``source`` from being a :class:`ToolSource` (or a skill source, which has
    the same shape), if anything."""
    name = getattr(source, "name", None)
    if not isinstance(name, str) or not name:
        return f"its source {source!r} has no name (a non-empty str)"
    precedence = getattr(source, "precedence", None)
    if not isinstance(precedence, int) or isinstance(precedence, bool):
        return f"its source '{name}' has no precedence (an int)"
    if not callable(getattr(source, "scan", None)):
        return f"its source '{name}' has no scan() method"
    return None


class Tool(Record):
    """A tool in the registry: a validated schema and the command (or runner) that runs it."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    command: tuple[str, ...]
    source: str
    path: Path | None = None
    schema: Mapping[str, Any] = EMPTY
    runner: ToolRunner | None = None

    @property
    def location(self) -> str:
        """Where the tool lives, for people: its file, or its command line."""
        return str(self.path) if self.path is not None else " ".join(self.command)
