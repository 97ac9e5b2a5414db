"""The agents API (issue 25): JSON-RPC 2.0 over HTTP/1.1 on a Unix socket.

``POST /`` with a JSON-RPC request and ``Authorization: Bearer $IKIGAI_API_TOKEN``; any
language can call it (``curl --unix-socket "$IKIGAI_API" -H "Authorization: Bearer
$IKIGAI_API_TOKEN" -d '{"jsonrpc": "2.0", "id": 1, "method": "list"}' http://ikigai/``).
The token names the calling agent: every method acts for it, on its descendants only. The
socket lives in a private directory (0700) made for this process and removed at exit.
The standard library serves it (a thread per connection): no dependency.
``docs/agents-api.schema.json`` is the protocol's schema.
"""

from __future__ import annotations

import json
import os
import shutil
import socketserver
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ikigai_core.errors import IkigaiError
from ikigai_core.orchestration.supervisor import FORK_TOOL, Supervisor

if TYPE_CHECKING:
    from ikigai_core.orchestration.supervisor import AgentEvent
    from ikigai_core.session import Session

MAX_BODY = 1024 * 1024
"""Bytes a request body may hold."""
DEFAULT_WAIT = 60.0
"""Seconds ``wait`` waits when the call names no ``timeout``."""
MAX_WAIT = 3600.0

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
UNAUTHORIZED, REFUSED = -32001, -32002
"""Ours, in the range JSON-RPC leaves to servers: a missing or unknown token; a call the
runtime refuses (no such agent below the caller, the depth limit, an ended agent)."""


class RpcError(Exception):
    """A JSON-RPC error answer: ``code`` and a one-line ``message``."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


Params = Mapping[str, Any]
PARAMS: dict[str, dict[str, tuple[type | tuple[type, ...], bool]]] = {
    "fork": {"prompt": (str, True), "agent": (str, False), "tools": (list, False),
             "model": (str, False), "history": ((str, int), False), "budget": (dict, False)},
    "send": {"id": (str, True), "message": (str, True), "interrupt": (bool, False)},
    "wait": {"ids": (list, False), "timeout": ((int, float), False), "mode": (str, False),
             "max_output": (int, False)},
    "kill": {"id": (str, True), "cascade": (bool, False)},
    "list": {},
    "usage": {},
}
"""Each method's parameters: ``name -> (JSON type, required)``."""


def checked(method: str, params: Any) -> dict[str, Any]:
    """``params`` of ``method``, each of the right JSON type; else :class:`RpcError`."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, f"{method}: params must be an object of named values")
    spec = PARAMS[method]
    for name in params:
        if name not in spec:
            known = ", ".join(spec) or "none"
            raise RpcError(INVALID_PARAMS, f"{method}: unknown parameter '{name}' ({known})")
    for name, (kind, required) in spec.items():
        value = params.get(name)
        if value is None:
            if required:
                raise RpcError(INVALID_PARAMS, f"{method}: missing parameter '{name}'")
            continue
        if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
            raise RpcError(INVALID_PARAMS, f"{method}: '{name}' has the wrong type "
                           f"({json.dumps(value)[:40]})")
    return {k: v for k, v in params.items() if v is not None}


def dispatch(supervisor: Supervisor, caller: str, method: str, params: Any) -> Any:
    """Run one API call for agent ``caller``; its JSON result or :class:`RpcError`."""
    if method not in PARAMS:
        raise RpcError(METHOD_NOT_FOUND, f"no method '{method}'; methods: {', '.join(PARAMS)}")
    args = checked(method, params)
    try:
        return _call(supervisor, caller, method, args)
    except IkigaiError as exc:
        raise RpcError(REFUSED, str(exc)) from exc


def _call(sup: Supervisor, caller: str, method: str, a: dict[str, Any]) -> Any:
    if method == "fork":
        tools = a.get("tools")
        return {"id": sup.fork(a["prompt"], agent=a.get("agent"), tools=tools,
                               model=a.get("model"), history=a.get("history", "none"),
                               budget=a.get("budget"), caller=caller)}
    if method == "send":
        sup.send(a["id"], a["message"], interrupt=a.get("interrupt", False), caller=caller)
        return {"id": a["id"], "queued": True}
    if method == "wait":
        timeout = float(a.get("timeout", DEFAULT_WAIT))
        if not 0 <= timeout <= MAX_WAIT:
            raise RpcError(INVALID_PARAMS, f"wait: timeout must be 0 to {MAX_WAIT:g} seconds")
        ids = a.get("ids", [])
        if not all(isinstance(i, str) for i in ids):
            raise RpcError(INVALID_PARAMS, "wait: ids must be a list of agent ids")
        extra = {"max_output": a["max_output"]} if "max_output" in a else {}
        results = sup.wait(ids, timeout, mode=a.get("mode", "all"), caller=caller, **extra)
        return {"agents": [r.as_dict() for r in results]}
    if method == "kill":
        return sup.kill(a["id"], cascade=a.get("cascade", True), caller=caller).as_dict()
    if method == "list":
        return {"agents": [info.as_dict() for info in sup.list(caller=caller)]}
    return sup.usage(caller=caller)


def answer(supervisor: Supervisor, token: str | None, body: bytes) -> tuple[int, dict[str, Any]]:
    """The HTTP status and JSON-RPC response to one request ``body``."""
    request_id: Any = None
    try:
        try:
            request = json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise RpcError(PARSE_ERROR, f"the body is not JSON: {exc}") from exc
        if not isinstance(request, dict):
            raise RpcError(INVALID_REQUEST, "send one JSON-RPC request object (no batches)")
        request_id = request.get("id")
        if request.get("jsonrpc") != "2.0" or not isinstance(request.get("method"), str):
            raise RpcError(INVALID_REQUEST, 'a request needs "jsonrpc": "2.0" and a "method"')
        caller = None if token is None else supervisor.agent_for(token)
        if caller is None:
            raise RpcError(UNAUTHORIZED, "no valid token: send the header "
                           "'Authorization: Bearer $IKIGAI_API_TOKEN'")
        result = dispatch(supervisor, caller, request["method"], request.get("params"))
    except RpcError as exc:
        status = 401 if exc.code == UNAUTHORIZED else 200
        return status, {"jsonrpc": "2.0", "id": request_id,
                        "error": {"code": exc.code, "message": str(exc)}}
    return 200, {"jsonrpc": "2.0", "id": request_id, "result": result}

BUILTIN_TOOLS = "ikigai_tools_builtin.builtin"
"""The built-in tools' plugin (``IKIGAI_DISABLE_PLUGINS`` may block it)."""


@contextmanager
def serving(session: Session, *,
            on_event: Callable[[AgentEvent], None] | None = None) -> Iterator[Supervisor]:
    """``session``'s :meth:`Supervisor.for_session`, serving the agents API while the block
    runs: every tool process of the tree gets ``IKIGAI_API`` and its own agent's
    ``IKIGAI_API_TOKEN``, and the ``agent_*`` tools are discovered; a conversation not
    begun that sends ``agent_fork`` is told the agent definitions; with ``agents_api_mcp``
    an MCP server started meanwhile gets both (the root's token) through
    :attr:`App.served_environ <ikigai_core.app.App.served_environ>`. At its end every child
    is stopped, the socket's directory removed and the variables taken back (``ask`` and
    ``chat`` run in this)."""
    from ikigai_tools_builtin.builtin import agent_tools

    supervisor = Supervisor.for_session(session, on_event=on_event)
    server = ApiServer(supervisor)
    app = session.app
    # the agent_* tools are built-ins like the six: blocking the built-ins blocks them
    tools = None if app.pm.is_blocked(BUILTIN_TOOLS) else agent_tools()
    supervisor.environ = {"IKIGAI_API": str(server.path)}
    session.tool_context(environ={**supervisor.environ,
                                  "IKIGAI_API_TOKEN": supervisor.root.token}, notices=None)
    if tools is not None:
        app.served_sources.append(tools)
        if session.toolset.chooses(FORK_TOOL):  # what it may fork, by name
            session.tell(supervisor.index)
    session.registry = None  # discover again, with them
    served = ({**supervisor.environ, "IKIGAI_API_TOKEN": supervisor.root.token}
              if app.settings.agents_api_mcp else {})
    app.served_environ.update(served)  # an MCP server started from now on gets them
    try:
        yield supervisor
    finally:
        supervisor.close()
        server.close()
        for name in served:
            app.served_environ.pop(name, None)
        if tools is not None:
            app.served_sources.remove(tools)


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A caller that hung up (its tool killed mid-call: Ctrl-C, ``kill``) is no error
        and prints nothing; anything else is reported as socketserver reports it."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class ApiServer:
    """Serves ``supervisor`` on a socket in a new private directory until :meth:`close`.

    :param supervisor: the runtime the calls reach.
    """

    def __init__(self, supervisor: Supervisor) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="ikigai-api-",
                                               dir=_short_tmp()))  # 0700
        self.path = self.directory / "api.sock"
        """The socket (``IKIGAI_API``)."""
        self._server = _Server(str(self.path), _handler(supervisor))
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.2},
                                        name="ikigai-api", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop serving and remove the directory."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
        shutil.rmtree(self.directory, ignore_errors=True)


def _short_tmp() -> str | None:
    """Where the directory goes: ``$TMPDIR``, unless its path would make the socket's
    longer than a Unix socket may be (108 bytes), then ``/tmp``."""
    base = tempfile.gettempdir()
    return "/tmp" if len(os.fsencode(base)) > 60 else None


def _handler(supervisor: Supervisor) -> Callable[..., BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = self.headers.get("Content-Length")
            if length is None or not length.isdigit() or int(length) > MAX_BODY:
                self._reply(411 if length is None else 413, {
                    "jsonrpc": "2.0", "id": None, "error": {
                        "code": INVALID_REQUEST,
                        "message": f"send a Content-Length of at most {MAX_BODY} bytes"}})
                return
            body = self.rfile.read(int(length))
            auth = self.headers.get("Authorization", "")
            token = auth[7:].strip() if auth.startswith("Bearer ") else None
            self._reply(*answer(supervisor, token, body))

        def _reply(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def address_string(self) -> str:
            return "unix"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Nothing: the core prints nothing."""

    return Handler
