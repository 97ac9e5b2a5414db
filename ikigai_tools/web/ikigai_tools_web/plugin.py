"""The ``web`` plugin (entry point): the web tools as ``*-tool`` scripts, their settings.

Kept light: ikigai start-up imports this module only; the tools' dependencies load in the
tool process.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ikigai_core import DirectorySource, hookimpl

if TYPE_CHECKING:
    from ikigai_core import CallContext, CallDecision, ProcessSpec, ToolCallRequest

WEB_SCRIPTS = ("web_fetch-tool", "web_search-tool")
"""The tools this distribution installs (console scripts)."""
WEB_TOOLS = tuple(script.removesuffix("-tool") for script in WEB_SCRIPTS)
PRECEDENCE = 0
"""With the built-in tools (system): the user's and the project's tools override them."""

@hookimpl
def ikigai_tool_sources() -> list[DirectorySource]:
    """The installed web tool scripts, next to the built-in ones."""
    from ikigai_tools_builtin.builtin import scripts_dirs

    dirs = scripts_dirs()
    found = next((d for d in dirs if (d / WEB_SCRIPTS[0]).exists()), dirs[0])
    return [DirectorySource(found, name="web", precedence=PRECEDENCE, only=WEB_SCRIPTS)]


@hookimpl
def ikigai_before_tool_call(request: ToolCallRequest) -> CallDecision | None:
    """Refuse a web tool call at its start when the ``web`` settings are wrong, when
    web_fetch's URL did not appear in the conversation (``web.fetch_only_seen_urls``), or
    when the tool has spent its ``web.max_uses`` in this conversation. A call from no
    conversation (``ikigai tool run``, ``mcp serve``) meets neither conversation rule."""
    if request.tool.name not in WEB_TOOLS:
        return None
    from ikigai_core import CallDecision
    from ikigai_tools_web.settings import WebSettingsError, check

    try:
        settings = check(request.context.settings.web, request.context.environ)
    except WebSettingsError as exc:
        return CallDecision.deny(str(exc))
    if request.tool.name == "web_fetch" and settings["fetch_only_seen_urls"]:
        from ikigai_tools_web.seen import unseen

        refused = unseen(request)
        if refused is not None:
            return refused
    from ikigai_tools_web.budget import over_budget

    return over_budget(request, settings["max_uses"])


@hookimpl
def ikigai_tool_process(spec: ProcessSpec, context: CallContext) -> None:
    """Hand a web tool its checked settings and the cache file under ``$IKIGAI_HOME``;
    keep the built-in search backends' keys from every process but web_search's."""
    if spec.tool != "web_search":
        from ikigai_tools_web.search.builtin import key_variables

        for name in key_variables():
            spec.env.pop(name, None)
    if spec.tool not in WEB_TOOLS or spec.purpose != "call":
        return
    import json

    from ikigai_tools_web.settings import ENV_NAME, check

    spec.env[ENV_NAME] = json.dumps(check(context.settings.web, context.environ))
    spec.env["IKIGAI_WEB_CACHE"] = str(Path(context.home) / "web-cache.db")


@hookimpl
def ikigai_search_backends() -> list[object]:
    """Brave, Tavily, Google Programmable Search, SearXNG and DuckDuckGo (called by the
    ``web_search`` tool process only)."""
    from ikigai_tools_web.search.builtin import backends

    return list(backends())
