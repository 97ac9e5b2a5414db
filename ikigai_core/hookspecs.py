"""Every hook ikigai calls. Plugins implement them with :data:`ikigai_core.hookimpl`.

Hooks are called with keyword arguments only; an implementation may accept any
subset of them, so adding an argument later breaks no plugin.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from ikigai_core.config import Settings
    from ikigai_core.decision import CallDecision
    from ikigai_core.grants import Grants
    from ikigai_core.lifecycle import CallContext, CallRecord, ProcessSpec, ToolCallRequest
    from ikigai_core.notices import Notices
    from ikigai_core.outcome import ToolOutcome
    from ikigai_core.providers import Provider
    from ikigai_core.sessions import StoreKind
    from ikigai_core.skills import SkillSource
    from ikigai_core.tools import ToolSource

hookspec = pluggy.HookspecMarker("ikigai")


# -- Tool sources -------------------------------------------------------------


@hookspec
def ikigai_tool_sources(
    home: Path, cwd: Path, refresh: bool, prepare_process: Callable[[ProcessSpec], None],
    notices: Notices,
) -> Sequence[ToolSource]:
    """Return the tool sources this plugin contributes.

    Called at every discovery (start-up, ``ikigai refresh``, ``/refresh``). Every
    source's tools are merged into one registry; on a name clash the source with the
    higher ``precedence`` wins (system 0 < user 10 < project 20).

    :param home: the ikigai home directory (``$IKIGAI_HOME``, default ``~/.ikigai``).
    :param cwd: the directory ikigai runs in.
    :param refresh: ``True`` for ``ikigai refresh`` and ``/refresh``: a source that
        caches what it found should look again.
    :param prepare_process: a source that starts a process of its own (a long-lived
        server, purpose ``server``) passes its :class:`~ikigai_core.ProcessSpec` through
        this first: the ``ikigai_tool_process`` hook, as for every tool process.
    :param notices: where a source reports what happens later (a server that fails in
        the background).
    :returns: zero or more sources, never ``None``.
    """


@hookspec
def ikigai_tools_changed() -> bool:
    """Say whether this plugin's tools changed since the last discovery.

    Called before every model turn of ``ask`` and ``chat``. A source whose tools can
    change while ikigai runs (an MCP server's ``tools/list_changed``) answers ``True``
    once per change; the agent then discovers again, so the next turn sees the new tools.

    :returns: ``True`` when the registry is out of date.
    """


# -- Providers ----------------------------------------------------------------


@hookspec
def ikigai_provider_serializers() -> Sequence[Provider]:
    """Return the LLM providers this plugin contributes.

    Called once when ikigai first needs a provider (``ikigai request``, ``ask``,
    ``chat``, ``plugins``). Each provider's ``name`` must be unique across plugins.

    :returns: zero or more :class:`ikigai_core.Provider` instances.
    """


# -- Results ------------------------------------------------------------------


@hookspec(firstresult=True)
def ikigai_wrap_result(outcome: ToolOutcome) -> Mapping[str, Any] | None:
    """Turn the outcome of one tool call into the JSON object the model receives.

    Called after every tool call, including calls that never started a process
    (unknown tool, invalid arguments). The default implementation (``ikigai_core.envelope``)
    runs last and builds the spec's envelope. Stops at first non-None result.

    :param outcome: what happened: the tool's result, or the error and the process's output.
    :returns: a JSON-serializable object, or ``None`` to leave the decision to the next plugin.
    """


# -- Commands -----------------------------------------------------------------


@hookspec
def ikigai_commands() -> Sequence[object]:
    """Return click commands or groups to add to ``ikigai``.

    Called when the command line names a command ikigai does not have, and for
    ``ikigai --help``. A command whose name ikigai already uses is reported and skipped.
    Keep the plugin module light: import what the command needs inside it.

    :returns: zero or more ``click.Command`` (or ``click.Group``) objects. (Typed
        ``object``: the core does not import click; the CLI checks each one and reports
        anything else.)
    """


# -- The tool-call lifecycle ---------------------------------------------------


@hookspec
def ikigai_before_tool_call(request: ToolCallRequest) -> CallDecision | None:
    """See a tool call before it runs: allow it, deny it, or replace its arguments.

    Called for every call of a tool that exists, after its arguments passed validation.
    Every plugin answers; a ``deny`` wins over everything else, and then the first
    ``replace`` in call order is used (its arguments are validated again). A denied call
    starts no process: the model gets ``TOOL_DENIED`` with the reason. A plugin that
    raises denies the call (fail closed), and the failure is reported.

    :param request: the tool, its arguments, the call's context, and the conversation the
        call comes from (its messages, read-only; ``None`` for a call from no conversation:
        ``ikigai tool run``, ``tool test``, ``mcp serve``).
    :returns: a :class:`ikigai_core.CallDecision`, or ``None`` to have no say.
    """


@hookspec
def ikigai_after_tool_call(record: CallRecord) -> None:
    """Observe a finished call: its tool, arguments, outcome and duration.

    Called for every call, including those that never ran (unknown tool, invalid
    arguments, denied). A plugin that raises is reported and not called again.

    :param record: what was called and what happened.
    :returns: nothing.
    """


@hookspec
def ikigai_tool_process(spec: ProcessSpec, context: CallContext) -> None:
    """Change how a tool process starts: its argv, environment and working directory.

    Called before every tool process starts, both for calls and for ``--schema``; change
    ``spec`` in place. This is where an environment policy or a sandbox plugs in.

    :param spec: the command line, environment and directory, changed in place.
    :param context: the invocation's directory, home, environment and settings (read only).
    :returns: nothing.
    """


# -- The system prompt ---------------------------------------------------------


@hookspec
def ikigai_system_prompt(cwd: Path, home: Path, settings: Settings) -> Sequence[str]:
    """Return fragments to add to the system prompt sent to the model.

    Called once per conversation. Fragments are joined with a blank line between them,
    in plugin call order: the default prompt (``ikigai_core.defaults.system_prompt``,
    ``tryfirst``) comes first, the trusted project's instructions
    (``ikigai_core.defaults.project_instructions``, ``trylast``) last; the skills index
    is added after every fragment (and, in a conversation sent ``agent_fork``, the agent
    definitions' index at the end: docs/agents.md).

    :param cwd: the directory ikigai runs in.
    :param home: the ikigai home directory.
    :param settings: the settings; ``settings.system_prompt`` is ``--system`` or the config's.
    :returns: zero or more markdown fragments.
    """


# -- Skills ---------------------------------------------------------------------


@hookspec
def ikigai_skill_sources(home: Path, cwd: Path) -> Sequence[SkillSource]:
    """Return the skill sources this plugin contributes (a plugin shipping skills gives
    a :class:`ikigai_core.skills.SkillDirectory` of its own).

    Called once per invocation that needs skills (``ask``, ``chat``, ``request``,
    ``skill``, tool discovery). On a skill-name clash the source with the higher
    ``precedence`` wins (system 0 < user 10 < project 20).

    :param home: the ikigai home directory.
    :param cwd: the directory ikigai runs in.
    :returns: zero or more sources, each with ``name``, ``precedence`` and ``scan()``
        returning a :class:`ikigai_core.skills.SkillScan`.
    """


# -- The chat's status line ----------------------------------------------------


@hookspec
def ikigai_status(context: CallContext, grants: Grants) -> Sequence[str]:
    """Return short words for the chat's status line, after the provider, model and tokens.

    Called each time a terminal chat draws its status line (at every prompt), so answer
    fast: an approval mode (``approve: ask``), a sandbox (``sandbox: on``).

    :param context: where and for whom this invocation's tool calls run.
    :param grants: what the chat's session approves without asking now (``--yes``,
        ``--allow``, ``/approve``); its sub-agents have the same.
    :returns: zero or more short strings.
    """


# -- Session stores -------------------------------------------------------------


@hookspec
def ikigai_session_stores() -> Sequence[StoreKind]:
    """Return the kinds of session store this plugin gives, each for some URL schemes.

    Called when a command first records or reads the session log; the ``sessions_url``
    setting's scheme picks the kind (the default plugin gives ``sqlite``,
    ikigai-store-postgres ``postgresql``). Keep the plugin module light: import the
    store's driver in ``StoreKind.open`` or later, never at import time.

    :returns: zero or more :class:`ikigai_core.sessions.StoreKind` objects; a scheme
        given twice is reported and the first kind kept.
    """


# -- Web search backends -------------------------------------------------------


@hookspec
def ikigai_search_backends() -> Sequence[object]:
    """Return the web search backends this plugin contributes to ``web_search``.

    Called by the ``web_search`` tool process (distribution ikigai-tools-web), once per
    call, through the same plugin manager as ikigai's; never at ikigai's start-up. Keep
    the plugin module light: the backend's HTTP work belongs in its ``search`` method.

    :returns: zero or more ``ikigai_tools_web.search.SearchBackend`` objects, each with a
        unique ``name``. (Typed ``object``: the core does not import the web tools; the
        tool checks each one and reports anything else.)
    """
