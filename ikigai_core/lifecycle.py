"""What the tool-call lifecycle hooks receive (their answer, :class:`CallDecision`, is in
:mod:`ikigai_core.decision`).

One call goes: look up the tool, validate the arguments, ``ikigai_before_tool_call``
(allow, deny, or replace the arguments), run it (a fresh process, after
``ikigai_tool_process``, or a long-lived :class:`~ikigai_core.tools.ToolRunner`),
``ikigai_after_tool_call``, then the envelope (``ikigai_wrap_result``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ikigai_core.grants import NO_GRANTS, Grants
from ikigai_core.record import Record

if TYPE_CHECKING:
    from ikigai_core.config import Settings
    from ikigai_core.conversation import Message
    from ikigai_core.notices import Notices
    from ikigai_core.outcome import ToolOutcome
    from ikigai_core.tools import Tool


class CallContext(Record):
    """Where and for whom tool calls run; the same for every call of one invocation.

    :param cwd: the directory tools run in.
    :param home: ``$IKIGAI_HOME``.
    :param environ: the environment ikigai was started with (tools get a copy of it,
        after ``ikigai_tool_process``).
    :param settings: the invocation's settings.
    :param project: the project ``cwd`` is in (:attr:`App.project
        <ikigai_core.app.App.project>`, found once per invocation), ``None`` outside every
        project; whether it is trusted is for each call to ask
        (:func:`~ikigai_core.trust.project_trust`).
    :param ask_user: shows the user one question and returns the line they answered,
        or ``None`` when nobody can answer (no terminal, Ctrl-C). ``None`` itself when the
        front end cannot ask at all (``ask`` without a terminal, a library caller).
    :param notices: where a plugin tells the user something (the CLI prints each one);
        ``None`` when nobody listens.
    """

    cwd: Path
    home: Path
    environ: Mapping[str, str]
    settings: Settings
    project: Path | None
    ask_user: Callable[[str], str | None] | None = None
    notices: Notices | None = None


class ToolCallRequest(Record):
    """One tool call about to run, as ``ikigai_before_tool_call`` sees it.

    :param tool: the registry tool.
    :param arguments: the arguments, already valid against ``tool.parameters``.
    :param context: where and for whom it runs.
    :param call_id: the provider's id for the call, when the model made it.
    :param conversation: the conversation the call comes from, read-only: its messages
        (``UserMessage``, ``AssistantMessage``, ``ToolResultsMessage``) oldest first, up to
        the model turn that made this call (so the turn's other calls are in its last
        message, their results not yet). ``None`` for a call from no conversation
        (``ikigai tool run``, ``tool test``, ``mcp serve``, a library caller).
    :param grants: what the session making the call approves without asking (``--yes``,
        ``--allow``, chat's ``/approve``; a sub-agent's parent's), as they are now: read
        when the call is judged. Nothing (:data:`~ikigai_core.grants.NO_GRANTS`) for a call
        from no session.
    """

    tool: Tool
    arguments: Mapping[str, Any]
    context: CallContext
    call_id: str | None = None
    conversation: tuple[Message, ...] | None = None
    grants: Grants = NO_GRANTS


class CallRecord(Record):
    """One finished call, as ``ikigai_after_tool_call`` sees it.

    :param name: the tool name the model asked for (there may be no such tool).
    :param tool: the registry tool, or ``None`` when it was not found.
    :param arguments: the arguments the call ran with (or was refused with).
    :param outcome: what happened.
    :param duration: seconds from the start of the lifecycle to the outcome.
    :param context: where and for whom it ran.
    :param call_id: the provider's id for the call, when the model made it.
    """

    name: str
    tool: Tool | None
    arguments: Any
    outcome: ToolOutcome
    duration: float
    context: CallContext
    call_id: str | None = None


@dataclass
class ProcessSpec:
    """A tool process about to start; ``ikigai_tool_process`` plugins change it in place.

    :param tool: the tool's name (for a ``server``, its source's: ``mcp:NAME``).
    :param purpose: ``call`` (running a call), ``schema`` (asking ``--schema``) or
        ``server`` (a long-lived process whose tools a source serves, an MCP server).
    :param argv: the command line; a sandbox wraps it (``["bwrap", ..., *argv]``).
    :param env: the whole environment the process gets.
    :param cwd: the directory it starts in.
    """

    tool: str
    purpose: str
    argv: list[str]
    env: dict[str, str]
    cwd: Path | None = None
