"""A client of ikigai's agents API, for tools written in Python (issue 25).

While a conversation runs, ikigai gives every tool process ``IKIGAI_API`` (a Unix socket)
and ``IKIGAI_API_TOKEN`` (the calling agent's capability). The protocol is JSON-RPC 2.0
over HTTP on that socket (``docs/agents-api.schema.json``); this is one way to speak it::

    from ikigai_toolkit.agents_api import AgentsClient

    api = AgentsClient()                       # from the environment
    child = api.fork("Summarise README.md", budget={"tokens": 20000})
    [result] = api.wait([child], timeout=120)
    print(result["status"], result["output"])

Standard library only, like every built-in tool.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

NO_API = ("IKIGAI_API is not set: the agents API is served only while `ikigai ask` or "
          "`ikigai chat` runs a conversation; call this from a tool it runs")


class AgentsApiError(Exception):
    """The API refused a call, or could not be reached: ``code`` (JSON-RPC's, or ``None``
    when nothing answered) and a one-line message."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


def _connection(path: str, timeout: float | None) -> Any:
    """An HTTP connection over the Unix socket ``path`` (http.client loads here, not when a
    tool's ``--schema`` is asked)."""
    import http.client
    import socket

    class UnixConnection(http.client.HTTPConnection):
        def connect(self) -> None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            sock.connect(path)
            self.sock = sock

    return UnixConnection("ikigai", timeout=timeout)


class AgentsClient:
    """Calls the agents API as the agent owning ``token``.

    :param path: the socket (default ``$IKIGAI_API``).
    :param token: the capability (default ``$IKIGAI_API_TOKEN``).
    """

    def __init__(self, path: str | None = None, token: str | None = None,
                 environ: Mapping[str, str] = os.environ) -> None:
        path = path or environ.get("IKIGAI_API")
        token = token or environ.get("IKIGAI_API_TOKEN")
        if not path or not token:
            raise AgentsApiError(NO_API)
        self.path, self.token = path, token
        self._ids = 0

    def call(self, method: str, params: Mapping[str, Any] | None = None,
             timeout: float | None = None) -> Any:
        """One JSON-RPC call; its ``result``, or :class:`AgentsApiError`."""
        self._ids += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self._ids, "method": method,
                           "params": {k: v for k, v in (params or {}).items() if v is not None}})
        connection = _connection(self.path, timeout)
        try:
            connection.request("POST", "/", body, {"Content-Type": "application/json",
                                                   "Authorization": f"Bearer {self.token}"})
            reply = json.loads(connection.getresponse().read())
        except OSError as exc:
            raise AgentsApiError(f"cannot reach the agents API at {self.path}: "
                                 f"{exc.strerror or exc}") from exc
        except ValueError as exc:
            raise AgentsApiError(f"the agents API answered something that is not JSON: {exc}") \
                from exc
        finally:
            connection.close()
        if not isinstance(reply, dict):
            raise AgentsApiError("the agents API answered something that is not an object")
        if "error" in reply:
            error = reply["error"] if isinstance(reply["error"], dict) else {}
            raise AgentsApiError(str(error.get("message", "unknown error")), error.get("code"))
        return reply.get("result")

    def fork(self, prompt: str, *, agent: str | None = None,
             tools: Sequence[str] | None = None, model: str | None = None,
             history: str | int | None = None,
             budget: Mapping[str, float] | None = None) -> str:
        """Start a child agent on ``prompt``; its id."""
        result = self.call("fork", {"prompt": prompt, "agent": agent,
                                    "tools": None if tools is None else list(tools),
                                    "model": model, "history": history,
                                    "budget": None if budget is None else dict(budget)})
        return str(result["id"])

    def send(self, agent_id: str, message: str, *, interrupt: bool = False) -> None:
        """Give a child its next message (``interrupt``: at once)."""
        self.call("send", {"id": agent_id, "message": message, "interrupt": interrupt})

    def wait(self, ids: Sequence[str] = (), timeout: float = 60, *, mode: str = "all",
             max_output: int | None = None) -> list[dict[str, Any]]:
        """Wait for children (default: all of yours); each one's result."""
        result = self.call("wait", {"ids": list(ids), "timeout": timeout, "mode": mode,
                                    "max_output": max_output}, timeout=timeout + 30)
        return list(result["agents"])

    def kill(self, agent_id: str, *, cascade: bool = True) -> dict[str, Any]:
        """Stop a child (and its descendants); what it looks like now."""
        return dict(self.call("kill", {"id": agent_id, "cascade": cascade}, timeout=60))

    def list(self) -> list[dict[str, Any]]:
        """Your descendants."""
        return list(self.call("list")["agents"])

    def usage(self) -> dict[str, Any]:
        """Tokens you and your descendants used."""
        return dict(self.call("usage"))
