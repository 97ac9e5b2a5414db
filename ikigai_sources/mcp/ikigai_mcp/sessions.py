"""One long-lived MCP session per server per ikigai process.

Every session lives on one event loop in a daemon thread (``ikigai-mcp``); callers in
other threads (the executor's workers, discovery) submit coroutines to it and wait with
a deadline. A session starts on first use (or in the background, :meth:`Connection.start`)
and is restarted on the next call after its server died, closed the connection, or stopped
answering a ping after a timeout: that start has a budget of its own
(:meth:`Connection.ready`), and the call's timeout starts once the session is ready. At
exit every session closes the way the SDK does it (close stdin, wait, SIGTERM then
SIGKILL). A stdio server starts as ikigai's tool processes do, through the
``ikigai_tool_process`` hook (purpose ``server``: the environment policy, the sandbox),
and runs under :mod:`ikigai_mcp.reaper`, which takes the server's whole process group
with it when the server ends, when it is stopped, or when ikigai is gone (even
SIGKILLed): no process a server started outlives ikigai.

Importing this module imports the ``mcp`` SDK: only code that talks to a server does.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import os
import shutil
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, TypeVar

import anyio
import mcp_types
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

from ikigai_core import ProcessSpec
from ikigai_mcp.config import ServerConfig

CLOSE_TIMEOUT = 6.0
"""Seconds the exit handler waits for every session to close (the SDK's own shutdown
takes at most 2 s after stdin closes, then 2 s after SIGTERM)."""
PING_TIMEOUT = 2.0
"""Seconds a server that timed out gets to answer a ping before it is restarted."""
POLL = 0.1
"""How often a waiting caller looks at its ``cancelled`` event (a result wakes it at once)."""
ABANDON_TIMEOUT = 2.0
"""Seconds a timed-out or interrupted call gets to end: the SDK writes
``notifications/cancelled`` as it ends, before the session may close."""
SAFE_VARS = (*DEFAULT_INHERITED_ENV_VARS, "LANG", "LANGUAGE", "LC_*", "TZ", "TMPDIR")
"""What a stdio server gets of ikigai's environment (the SDK's allow-list and the locale),
besides its own ``env``: never a provider key."""
REAPER = str(Path(__file__).with_name("reaper.py"))

T = TypeVar("T")
Prepare = Callable[[ProcessSpec], None]
"""The ``ikigai_tool_process`` hook of the invocation (``App.prepare_process``)."""
Relisting = Callable[[concurrent.futures.Future[list[dict[str, Any]]]], None]
"""Told the moment a server says ``notifications/tools/list_changed``: the future is its
new listing, asked for at once."""

logging.getLogger("mcp").addHandler(logging.NullHandler())  # no SDK traceback on the terminal

_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()
_connections: dict[tuple[str, str], Connection] = {}


class ServerError(Exception):
    """A server could not be used: the one-line reason, for the user and the model."""


class Closed(ServerError):
    """The session was closed by ikigai (at exit, or after a timeout): not the server's fault."""


class CallTimedOut(ServerError):
    """The call outlived its timeout; ``notifications/cancelled`` was sent."""


def event_loop() -> asyncio.AbstractEventLoop:
    """The sessions' event loop, started (with its exit handler) on first use."""
    global _loop
    with _loop_lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="ikigai-mcp", daemon=True).start()
            atexit.register(close_all)
            _loop = loop
        return _loop


def connection(config: ServerConfig, home: Path, on_tools: Relisting | None = None,
               prepare: Prepare | None = None) -> Connection:
    """This process's one connection to the server ``config`` (made, not started, on first
    ask); ``on_tools`` and ``prepare`` replace the ones given before."""
    key = (config.name, config.key)
    with _loop_lock:
        found = _connections.get(key)
        if found is None:
            found = _connections[key] = Connection(config, home)
        if on_tools is not None:
            found.on_tools = on_tools
        if prepare is not None:
            found.prepare = prepare
        return found


def close_all(timeout: float = CLOSE_TIMEOUT) -> None:
    """Close every session (at exit): each server is stopped, none outlives ikigai."""
    with _loop_lock:
        connections = list(_connections.values())
        _connections.clear()
    futures = [f for f in (c.close() for c in connections) if f is not None]
    concurrent.futures.wait(futures, timeout=timeout)


class Connection:
    """One server's session: started on first use, restarted after it died.

    :param config: the server.
    :param home: ``$IKIGAI_HOME`` (the server's stderr goes to ``logs/mcp-NAME.log`` there).
    """

    def __init__(self, config: ServerConfig, home: Path) -> None:
        self.config = config
        self.log = home / "logs" / f"mcp-{config.name}.log"
        self.on_tools: Relisting | None = None
        self.prepare: Prepare | None = None
        self._lock = threading.Lock()
        self._ready: concurrent.futures.Future[list[dict[str, Any]]] | None = None
        self._finished: concurrent.futures.Future[None] | None = None
        self._session: ClientSession | None = None
        self._starting: anyio.CancelScope | None = None
        self._stop: asyncio.Event | None = None
        self._suspect = False

    # -- the caller's side (any thread) ---------------------------------------------------

    def tools(self, cancelled: threading.Event | None = None) -> list[dict[str, Any]]:
        """Start the session if needed and return the server's tools (as MCP JSON), within
        the server's ``startupTimeout`` and until ``cancelled`` is set.

        :raises ServerError: it could not start (the reason says why).
        """
        timeout = self.config.startup_timeout
        try:  # its own start-up timeout fires first
            listed: list[dict[str, Any]] = _wait(self.start(), timeout + CLOSE_TIMEOUT,
                                                 cancelled or threading.Event())
            return listed
        except CallTimedOut:
            self.close()
            raise ServerError(f"it did not start within {timeout:g} s") from None

    def ready(self, cancelled: threading.Event) -> None:
        """Make the session ready for a call, on a budget of its own, not the call's: a
        server that timed out is pinged and, silent, stopped; one not running is started.

        :raises ServerError: it could not start (the reason says why).
        """
        if self._suspect:
            self._suspect = False
            self._check_alive()
        self.tools(cancelled)

    def call(self, name: str, arguments: Mapping[str, Any], *, timeout: float,
             cancelled: threading.Event) -> mcp_types.CallToolResult:
        """Call tool ``name`` on the session :meth:`ready` started; ``timeout`` runs from now.

        On timeout, or once ``cancelled`` is set, the call is cancelled and this returns
        (raising :class:`CallTimedOut`) only once ``notifications/cancelled`` is written.
        """
        session = self._session
        if session is None:
            raise ServerError(f"MCP server '{self.config.name}' closed the connection; "
                              "it restarts on the next call")
        ended = threading.Event()
        future = asyncio.run_coroutine_threadsafe(
            _flagging(session.call_tool(name, dict(arguments)), ended), event_loop())
        try:
            result: mcp_types.CallToolResult = _wait(future, timeout, cancelled)
            return result
        except CallTimedOut:
            future.cancel()  # the SDK sends notifications/cancelled as the call ends
            ended.wait(ABANDON_TIMEOUT)
            self._suspect = True  # a ping decides, on the next call, whether to restart
            raise
        except MCPError as exc:
            if exc.error.code == mcp_types.CONNECTION_CLOSED:
                self.close_and_wait()
                raise ServerError(f"MCP server '{self.config.name}' closed the connection "
                                  f"during the call{self._last_words()}; it restarts on the "
                                  "next call") from exc
            raise

    def close(self) -> concurrent.futures.Future[None] | None:
        """Stop the session (or its start-up); the future is done once the server is gone."""
        with self._lock:
            finished = self._finished
        if finished is None or finished.done():
            return None
        event_loop().call_soon_threadsafe(self._halt)
        return finished

    def close_and_wait(self) -> None:
        """:meth:`close`, and wait (boundedly) until the server is gone."""
        finished = self.close()
        if finished is not None:
            concurrent.futures.wait([finished], timeout=CLOSE_TIMEOUT)

    def start(self) -> concurrent.futures.Future[list[dict[str, Any]]]:
        """Start the session in the background (if it is not running); its listing, later."""
        with self._lock:
            if self._finished is not None and not self._finished.done():
                assert self._ready is not None
                return self._ready
            ready: concurrent.futures.Future[list[dict[str, Any]]] = concurrent.futures.Future()
            finished: concurrent.futures.Future[None] = concurrent.futures.Future()
            self._ready, self._finished = ready, finished
            try:  # here, not on the loop: a plugin may take its time (the sandbox's probe)
                params = None if self.config.url is not None else self._stdio_params()
            except Exception as exc:
                _settle(ready, error=ServerError(self._reason(exc)))
                _settle(finished, None)
                return ready
            self._stop = stop = asyncio.Event()
            asyncio.run_coroutine_threadsafe(self._serve(ready, finished, stop, params),
                                             event_loop())
            return ready

    def _stdio_params(self) -> StdioServerParameters:
        """How the stdio server starts: its command as the ``ikigai_tool_process`` plugins
        leave it (purpose ``server``), under the reaper, with ikigai's :data:`SAFE_VARS`,
        its own ``env`` and whatever the plugins added or changed (the agents API's
        variables, even when an outer ikigai set its own): never the rest of ikigai's
        environment (a provider key), and nothing the plugins removed."""
        config, environ = self.config, os.environ
        argv = list(config.command)
        path = config.env.get("PATH", environ.get("PATH"))
        found = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=path)
        if found is None:
            raise FileNotFoundError(argv[0])
        argv[0] = found
        spec = ProcessSpec(f"mcp:{config.name}", "server", argv, {**environ, **config.env},
                           None if config.cwd is None else Path(config.cwd))
        if self.prepare is not None:
            self.prepare(spec)
        env = {name: value for name, value in spec.env.items()
               if name in config.env or environ.get(name) != value
               or any(fnmatchcase(name, safe) for safe in SAFE_VARS)}
        return StdioServerParameters(command=sys.executable,
                                     args=["-I", "-S", REAPER, *spec.argv], env=env,
                                     cwd=spec.cwd)

    def _check_alive(self) -> None:
        """After a timeout: restart the server unless it answers a ping at once."""
        session = self._session
        if session is None:
            return
        ping = asyncio.run_coroutine_threadsafe(session.send_ping(), event_loop())
        try:
            ping.result(PING_TIMEOUT)
        except Exception:
            ping.cancel()
            self.close_and_wait()

    def _last_words(self) -> str:
        """``: <the last line the server wrote on stderr>``, if it wrote one."""
        try:
            with open(self.log, "rb") as log:
                log.seek(max(log.seek(0, os.SEEK_END) - 4096, 0))
                lines = [ln.strip() for ln in log.read().decode(errors="replace").splitlines()]
        except OSError:
            return ""
        last = self.config.unexpand(next((ln for ln in reversed(lines) if ln), ""))
        return f" (its stderr said: {last[:200]})" if last else ""

    # -- the loop's side -------------------------------------------------------------------

    async def _serve(self, ready: concurrent.futures.Future[list[dict[str, Any]]],
                     finished: concurrent.futures.Future[None], stop: asyncio.Event,
                     params: StdioServerParameters | None) -> None:
        """Hold the transport and session open until :meth:`close` (or the server dies)."""
        try:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport(stack, params))
                garbage: list[Exception] = []
                session = await stack.enter_async_context(ClientSession(
                    read, write, message_handler=self._handler(garbage)))
                tools = None
                with anyio.CancelScope() as self._starting:
                    if stop.is_set():
                        self._starting.cancel()
                    with anyio.fail_after(self.config.startup_timeout):
                        await session.initialize()
                        tools = await _list_tools(session)
                self._starting = None
                if tools is None:
                    raise ServerError("it wrote something that is not MCP (JSON-RPC) on stdout"
                                      if garbage else "its start-up was cancelled")
                self._session = session
                _settle(ready, tools)
                await stop.wait()
        except Exception as exc:  # every failure becomes the reason for the waiter
            _settle(ready, error=Closed("its session was closed") if stop.is_set()
                    else ServerError(self._reason(exc)))
        finally:
            self._session = self._starting = None
            _settle(ready, error=Closed("its session was closed"))
            _settle(finished, None)

    def _halt(self) -> None:
        """On the loop: end the session, or cancel its start-up."""
        if self._stop is not None:
            self._stop.set()
        if self._starting is not None:
            self._starting.cancel()

    def _transport(self, stack: AsyncExitStack, params: StdioServerParameters | None) -> Any:
        config = self.config
        if config.url is not None:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            return streamable_http_client(
                config.url, http_client=create_mcp_http_client(headers=dict(config.headers)))
        assert params is not None
        self.log.parent.mkdir(parents=True, exist_ok=True)
        errlog = stack.enter_context(open(self.log, "a", encoding="utf-8"))
        return stdio_client(params, errlog=errlog)

    def _handler(self, garbage: list[Exception]) -> Any:
        async def handle(message: Any) -> None:
            if isinstance(message, Exception):
                if self._starting is not None:  # still starting: give up at once
                    garbage.append(message)
                    self._starting.cancel()
            elif isinstance(message, mcp_types.ToolListChangedNotification):
                await self._relist()
        return handle

    async def _relist(self) -> None:
        """Tell ``on_tools`` at once (before the call that caused it returns), then list."""
        session = self._session
        if session is None or self.on_tools is None:
            return
        tools: concurrent.futures.Future[list[dict[str, Any]]] = concurrent.futures.Future()
        self.on_tools(tools)
        try:
            _settle(tools, await _list_tools(session))
        finally:  # failed, or cancelled as the session closed: the source keeps what it had
            _settle(tools, error=Closed("it was not listed again"))

    def _reason(self, exc: BaseException) -> str:
        """One line for why the server could not start."""
        while isinstance(getattr(exc, "exceptions", None), tuple) and exc.exceptions:  # type: ignore[attr-defined]
            exc = exc.exceptions[0]  # type: ignore[attr-defined]
        if isinstance(exc, ServerError):
            return str(exc) + self._last_words()
        if isinstance(exc, TimeoutError):
            return (f"it did not finish starting within {self.config.startup_timeout:g} s "
                    "(raise startupTimeout in mcp.json)")
        if isinstance(exc, FileNotFoundError):
            command = self.config.unexpand(self.config.command[0])
            return f"cannot start {command!r}: command not found"
        if isinstance(exc, OSError):
            return f"cannot start {self.config.where!r}: {exc.strerror or exc}"
        if isinstance(exc, MCPError) and exc.error.code == mcp_types.CONNECTION_CLOSED:
            return "it exited during start-up" + self._last_words()
        message = self.config.unexpand(" ".join(str(exc).split())) or type(exc).__name__
        return f"{message[:300]}{self._last_words()}"  # cut after unexpand: no half a key


async def _list_tools(session: ClientSession) -> list[dict[str, Any]]:
    """Every tool the server has, page after page, as MCP JSON."""
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools += [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools]
        cursor = page.next_cursor
        if not cursor:
            return tools


def _settle(future: concurrent.futures.Future[Any], result: Any = None, *,
            error: BaseException | None = None) -> None:
    """Give ``future`` its result or error, unless it has one already."""
    if not future.done():
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)


async def _flagging(work: Awaitable[T], ended: threading.Event) -> T:
    """``await work``, and set ``ended`` once it is over, however it ends."""
    try:
        return await work
    finally:
        ended.set()


def _wait(future: concurrent.futures.Future[Any], timeout: float,
          cancelled: threading.Event) -> Any:
    """``future``'s result within ``timeout`` and while ``cancelled`` is not set.

    :raises CallTimedOut: it did not come in time (``future`` is left running).
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            return future.result(min(POLL, max(deadline - time.monotonic(), 0)))
        except concurrent.futures.TimeoutError:
            if time.monotonic() < deadline and not cancelled.is_set():
                continue
            raise CallTimedOut("timed out") from None
