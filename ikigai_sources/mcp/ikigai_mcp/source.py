"""MCP servers as tool sources: one source ``mcp:NAME`` per configured server.

A server's tools join the registry as ``NAME__TOOL``. Their listing comes from the cache
(no server starts) unless it is missing, stale or ``refresh`` is asked; then every server
that must be listed starts at once, in parallel, and each source waits for its own.
Calls go to the server's one long-lived session through :class:`McpRunner`; an interactive
front end (``chat``) warms it, so the session starts in the background before the first call.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ikigai_core import SkippedTool, ToolCandidate, ToolScan
from ikigai_mcp.listing import ListingCache

if TYPE_CHECKING:  # what a call needs loads with its first call: `tool list` pays nothing
    import concurrent.futures
    import threading as _threading
    from collections.abc import Callable

    from ikigai_core import ProcessSpec, Tool, ToolOutcome
    from ikigai_core.notices import Notices
    from ikigai_mcp.config import ServerConfig
    from ikigai_mcp.sessions import Connection

USER_PRECEDENCE = 10
PROJECT_PRECEDENCE = 20
SEPARATOR = "__"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

tools_changed = threading.Event()
"""Set the moment a running server says ``notifications/tools/list_changed``."""
_relistings: dict[str, concurrent.futures.Future[list[dict[str, Any]]]] = {}
"""The new listing each such server was asked for, by its configuration key: the next
discovery waits for it (within the server's ``startupTimeout``)."""


def tool_name(server: str, tool: str) -> str:
    """``SERVER__TOOL`` fitted to ``[A-Za-z0-9_-]{1,64}``: other characters become ``_``;
    a longer name keeps its first 55 characters and a hash of the whole."""
    name = _UNSAFE.sub("_", f"{server}{SEPARATOR}{tool}")
    if len(name) > 64:
        import hashlib  # it loads OpenSSL: only for a long name, not every start-up

        name = f"{name[:55]}_{hashlib.sha256(name.encode()).hexdigest()[:8]}"
    return name


def precedence(config: ServerConfig) -> int:
    """The precedence of a server's tools: a project's win over the user's."""
    return PROJECT_PRECEDENCE if config.scope == "project" else USER_PRECEDENCE


def tool_schema(name: str, server: str, tool: Mapping[str, Any]) -> dict[str, Any]:
    """The ikigai schema of one MCP tool: ``parameters`` is its ``inputSchema``, ``returns``
    its ``outputSchema``, and ``annotations`` MCP's annotations object unchanged
    (``readOnlyHint``, ``destructiveHint``, ...: what approval policies read)."""
    description = tool.get("description") or tool.get("title") or (
        f"Tool '{tool.get('name')}' of the MCP server '{server}'.")
    schema: dict[str, Any] = {"name": name, "description": description,
                              "parameters": tool.get("inputSchema"),
                              "mcp": {"server": server, "tool": tool.get("name")}}
    if isinstance(tool.get("outputSchema"), dict):
        schema["returns"] = tool["outputSchema"]
    if isinstance(tool.get("annotations"), dict):
        schema["annotations"] = tool["annotations"]
    return schema


class McpSource:
    """The tools of one MCP server (source ``mcp:NAME``).

    :param config: the server.
    :param home: ``$IKIGAI_HOME`` (the server's log).
    :param cache: the listings, read once for every server of a discovery.
    :param refresh: list the server again even if its listing is cached.
    :param prepare: the ``ikigai_tool_process`` hook a stdio server's process goes through.
    :param notices: where a server failing in the background is reported.
    """

    def __init__(self, config: ServerConfig, home: Path, cache: ListingCache, *,
                 refresh: bool = False, prepare: Callable[[ProcessSpec], None] | None = None,
                 notices: Notices | None = None) -> None:
        self.config = config
        self.home = home
        self.name = f"mcp:{config.name}"
        self.precedence = precedence(config)
        self.cache = cache
        self.prepare = prepare
        self.notices = notices
        self._warm_lock = threading.Lock()
        self._warmed = False
        self._entry = None if refresh else self._relisted() or self.cache.get(config.key)
        if self._entry is None:  # start listing now, so every server starts in parallel
            self._connection().start()

    def __repr__(self) -> str:
        return f"McpSource({self.config.name!r}, {self.config.where!r})"

    def _connection(self) -> Connection:
        from ikigai_mcp import sessions  # lazy: the SDK is imported only to talk to a server

        return sessions.connection(self.config, self.home, on_tools=self._relisting,
                                   prepare=self.prepare)

    def warm(self) -> None:
        """Start the session in the background (once); return at once. A server that then
        fails is reported, its failure cached as its listing (``tool list`` and ``mcp list``
        show it, ``refresh`` tries again), and the next turn's registry leaves it out."""
        with self._warm_lock:
            if self._warmed:
                return
            self._warmed = True
        self._connection().start().add_done_callback(self._warmed_up)

    def _warmed_up(self, ready: concurrent.futures.Future[list[dict[str, Any]]]) -> None:
        from ikigai_mcp.sessions import Closed

        error = ready.exception()
        if error is None:
            if self._entry is None or ready.result() != self._entry.get("tools"):
                self._changed({"tools": ready.result()})  # it changed since it was cached
            return
        if isinstance(error, Closed):  # ikigai ended before the server was up
            return
        reason = self.config.unexpand(str(error))  # a key in a URL stays ${VAR}
        self._changed({"error": reason})
        if self.notices is not None:
            self.notices.report(f"MCP server '{self.config.name}' is not usable: {reason}; its "
                                "tools are left out until `ikigai refresh`", plugin="mcp")

    def listing(self) -> Mapping[str, Any]:
        """``{"tools": [...]}`` or ``{"error": reason}``: cached, or asked of the server now."""
        if self._entry is None:
            from ikigai_mcp.sessions import ServerError

            try:
                self._entry = {"tools": self._connection().tools()}
            except ServerError as exc:
                self._entry = {"error": self.config.unexpand(str(exc))}
            self._save(self._entry)
        return self._entry

    def scan(self) -> ToolScan:
        """The server's tools, from its listing; a server that failed is one skipped entry."""
        entry = self.listing()
        if "error" in entry:
            reason = (f"MCP server {self.config.where!r} is not usable: {entry['error']}; "
                      "`ikigai refresh` tries again")
            return ToolScan(skipped=[SkippedTool(self.config.name, self.name, reason)])
        candidates: dict[str, ToolCandidate] = {}
        skipped = []
        for tool in entry["tools"]:
            original = str(tool.get("name"))
            name = tool_name(self.config.name, original)
            if name in candidates:
                other = candidates[name].command[-1]
                skipped.append(SkippedTool(name, self.name, f"MCP tool {original!r} has the same "
                                           f"ikigai name as MCP tool {other!r}; one is left out"))
                continue
            runner = McpRunner(self, original)
            candidates[name] = ToolCandidate(
                name, ("mcp", self.config.name, original),
                schema=tool_schema(name, self.config.name, tool), runner=runner)
        skipped += self._clashes(candidates)
        return ToolScan(list(candidates.values()), skipped)

    def _clashes(self, candidates: dict[str, ToolCandidate]) -> list[SkippedTool]:
        """One line for each name this server's tools share with a server configured before
        it (``a__b`` + tool ``c``, ``a`` + tool ``b__c``: issue 22). The higher precedence
        keeps the name, else the server configured first: this one's tool then leaves
        ``candidates``. That server's tools are its listing in the cache, put there when its
        source was scanned, before this one."""
        skipped = []
        for other in self.config.before:
            for tool in (self.cache.get(other.key) or {}).get("tools", ()):
                theirs = str(tool.get("name"))
                name = tool_name(other.name, theirs)
                if name not in candidates:
                    continue
                mine = (self.config.name, candidates[name].command[-1])
                if self.precedence > precedence(other):
                    loser, winner = (other.name, theirs), mine
                else:
                    loser, winner = mine, (other.name, theirs)
                    del candidates[name]
                skipped.append(SkippedTool(name, f"mcp:{loser[0]}", (
                    f"MCP tool {loser[1]!r} of MCP server '{loser[0]}' has the same ikigai "
                    f"name as MCP tool {winner[1]!r} of MCP server '{winner[0]}', which keeps "
                    "it; rename one of the servers")))
        return skipped

    def _save(self, entry: Mapping[str, Any]) -> None:
        try:
            self.cache.put(self.config.key, entry)
        except OSError:  # an unwritable cache costs a listing next time, nothing else
            pass

    def _relisting(self, tools: concurrent.futures.Future[list[dict[str, Any]]]) -> None:
        """The server said ``tools/list_changed`` and is being listed again: the next turn
        rediscovers, and waits for the new listing."""
        _relistings[self.config.key] = tools
        tools.add_done_callback(self._listed_again)
        tools_changed.set()

    def _listed_again(self, tools: concurrent.futures.Future[list[dict[str, Any]]]) -> None:
        if tools.exception() is None:
            self._remember({"tools": tools.result()})

    def _relisted(self) -> Mapping[str, Any] | None:
        """The new listing of a server that said ``tools/list_changed`` (waited for within
        its ``startupTimeout``); ``None`` when it said nothing, or could not be listed."""
        tools = _relistings.pop(self.config.key, None)
        if tools is None:
            return None
        try:
            return {"tools": tools.result(self.config.startup_timeout)}
        except Exception:  # the listing failed or is late: the cached listing stands
            return None

    def _changed(self, entry: dict[str, Any]) -> None:
        """A listing or failure learnt after discovery: remember it; the next turn
        rediscovers."""
        self._remember(entry)
        tools_changed.set()

    def _remember(self, entry: dict[str, Any]) -> None:
        self._entry = entry
        self._save(entry)


class McpRunner:
    """Runs one MCP tool's calls on its server's long-lived session.

    :param source: the server's source.
    :param tool: the tool's MCP name.
    """

    def __init__(self, source: McpSource, tool: str) -> None:
        self.source = source
        self.tool = tool

    def warm(self) -> None:
        """Start the server's session in the background (every tool of a server shares it)."""
        self.source.warm()

    def ready(self, cancelled: _threading.Event) -> None:
        """Start the server's session, or restart it if it froze, before the call's clock
        starts (the executor calls this first); a server that cannot start raises
        :class:`~ikigai_mcp.sessions.ServerError`, its reason."""
        self.source._connection().ready(cancelled)

    def call(self, tool: Tool, arguments: Mapping[str, Any], *, timeout: float,
             cancelled: _threading.Event) -> ToolOutcome:
        """Call the tool; every failure is an outcome the model can read."""
        from mcp import MCPError

        from ikigai_core import ToolOutcome
        from ikigai_core.outcome import INVALID_PARAMS, TOOL_CRASHED, TOOL_TIMEOUT
        from ikigai_mcp import results
        from ikigai_mcp.sessions import CallTimedOut, ServerError

        server = self.source.config.name
        try:
            result = self.source._connection().call(self.tool, arguments, timeout=timeout,
                                                    cancelled=cancelled)
        except CallTimedOut:
            return ToolOutcome(tool.name, error=f"Tool '{tool.name}' timed out after "
                               f"{timeout:g} s; the MCP server '{server}' was told to cancel it",
                               error_code=TOOL_TIMEOUT)
        except ServerError as exc:
            reason = self.source.config.unexpand(str(exc))
            return ToolOutcome(tool.name, error=f"Tool '{tool.name}' failed: {reason}",
                               error_code=TOOL_CRASHED)
        except MCPError as exc:
            code = INVALID_PARAMS if exc.error.code == -32602 else TOOL_CRASHED
            return ToolOutcome(tool.name, error=f"Tool '{tool.name}': the MCP server '{server}' "
                               f"refused the call: {exc.error.message}", error_code=code)
        return results.outcome(tool.name, result.model_dump(mode="json", by_alias=True,
                                                            exclude_none=True))
