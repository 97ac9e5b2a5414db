"""A real HTTP server on 127.0.0.1 that replays scripted replies and records every request.

Shipped with pytest-ikigai (the ``fake_model`` fixture plays a script through it); ikigai's
own tests use it through their ``fake_server`` fixture::

    fake_server.push(json_reply({"ok": True}), sse_reply([{"delta": "hi"}, "data: [DONE]\\n\\n"]))
    ... point the client at fake_server.url ...
    assert fake_server.requests[0].json["model"] == "m"

Each request takes the next reply from the queue, in order (a multi-turn agent run
pushes one reply per turn); ``check``, when set, may answer a request first (ikigai's tests
answer one whose tools the real API would refuse with that API's 400). A request with no
reply left gets HTTP 500 with a body saying so. Replies can stream chunk by chunk (chunked
encoding, one flush per chunk), wait, stall, or drop the connection, to exercise timeouts
and broken streams. A client that hangs up while its reply waits or stalls is noticed at
once: the reply ends there, and the request is in ``hung_up``.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Union
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Reply:
    """One scripted response.

    :param status: the HTTP status.
    :param headers: extra headers (e.g. ``retry-after``).
    :param body: a whole body, sent with ``Content-Length``; ignored when ``chunks`` is set.
    :param chunks: a streamed body: each chunk written and flushed on its own.
    :param wait: seconds of silence before anything is sent (a server stalled before its
        headers; the connection is then closed without a response if ``no_response``).
    :param delay: seconds before each chunk.
    :param stall: seconds of silence after the chunks, before the body ends.
    :param drop: close the connection after the chunks without ending the body.
    :param no_response: close the connection without sending anything.
    """

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    chunks: Sequence[bytes] | None = None
    wait: float = 0.0
    delay: float = 0.0
    stall: float = 0.0
    drop: bool = False
    no_response: bool = False


@dataclass(frozen=True)
class RecordedRequest:
    """A request the server received. Header names are lower-case; ``json`` is ``None``
    when the body is not JSON."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    json: Any


SSEItem = Union[str, bytes, Mapping[str, Any], "tuple[str, Any]"]
"""A stream item: raw text/bytes, a JSON object (``data: {...}``), or ``(event, data)``."""


def sse_event(data: Any, event: str | None = None) -> bytes:
    """One server-sent event; ``data`` that is not a string is sent as JSON."""
    text = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return (head + "".join(f"data: {line}\n" for line in text.split("\n")) + "\n").encode()


def _sse_chunk(item: SSEItem) -> bytes:
    if isinstance(item, bytes):
        return item
    if isinstance(item, str):
        return item.encode()
    if isinstance(item, tuple):
        return sse_event(item[1], item[0])
    return sse_event(item)


def json_reply(body: Any, *, status: int = 200, headers: Mapping[str, str] | None = None) -> Reply:
    """A JSON response (``body`` is dumped unless it is already bytes)."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return Reply(status, {"Content-Type": "application/json", **(headers or {})}, raw)


def sse_reply(
    items: Iterable[SSEItem], *, status: int = 200, headers: Mapping[str, str] | None = None,
    delay: float = 0.0, stall: float = 0.0, drop: bool = False,
) -> Reply:
    """A ``text/event-stream`` response, one chunk per item (see :data:`SSEItem`)."""
    return Reply(
        status, {"Content-Type": "text/event-stream", **(headers or {})},
        chunks=[_sse_chunk(item) for item in items], delay=delay, stall=stall, drop=drop,
    )


def ndjson_reply(
    items: Iterable[str | Mapping[str, Any]], *, delay: float = 0.0, stall: float = 0.0,
    drop: bool = False,
) -> Reply:
    """An ``application/x-ndjson`` response, one chunk per line; an object is sent as JSON."""
    return Reply(
        200, {"Content-Type": "application/x-ndjson"},
        chunks=[(item if isinstance(item, str) else json.dumps(item) + "\n").encode()
                for item in items],
        delay=delay, stall=stall, drop=drop,
    )


def stall_reply(seconds: float) -> Reply:
    """Accept the request, then send nothing for ``seconds`` and close."""
    return Reply(wait=seconds, no_response=True)


def drop_reply() -> Reply:
    """Accept the request, then close the connection without a response."""
    return Reply(no_response=True)


def unused_url() -> str:
    """``http://127.0.0.1:PORT`` for a port nothing listens on (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class _Server(ThreadingHTTPServer):
    request_queue_size = 256
    """Connections waiting to be accepted: a hundred clients at once each get through
    (the default 5 drops the rest's first tries, which a loaded machine makes time out)."""


class FakeServer:
    """The server: ``url``, ``push(*replies)``, ``requests``, ``close()``."""

    def __init__(self, check: Callable[[RecordedRequest], Reply | None] | None = None) -> None:
        self.check = check
        """What may answer a request before the scripted replies (``None``: nothing does)."""
        self.requests: list[RecordedRequest] = []
        self.hung_up: list[RecordedRequest] = []
        """The requests whose client closed the connection while their reply waited,
        was delayed or stalled (a client cancelling, or giving up on a timeout)."""
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def push(self, *replies: Reply) -> None:
        """Queue replies; each request takes the next one."""
        with self._lock:
            self._replies.extend(replies)

    @property
    def pending(self) -> int:
        """How many pushed replies no request has taken yet."""
        with self._lock:
            return len(self._replies)

    def close(self) -> None:
        """Stop serving; stalled replies are cut short."""
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def __enter__(self) -> FakeServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _take(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            refused = self.check(request) if self.check else None
            if refused is not None:
                return refused
            if self._replies:
                return self._replies.popleft()
        message = f"fake server: no scripted reply left for {request.method} {request.path}"
        return json_reply({"error": {"message": message}}, status=500)

    def _hold(self, seconds: float, connection: socket.socket, request: RecordedRequest) -> bool:
        """Send nothing for ``seconds`` (less once the server closes); ``False`` as soon as
        the client hangs up (the request joins :attr:`hung_up`)."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0 and not self._closing.is_set():
            readable, _, _ = select.select([connection], [], [], min(left, 0.05))
            if not readable:
                continue
            try:
                hung_up = not connection.recv(1, socket.MSG_PEEK)
            except OSError:
                hung_up = True
            if hung_up:
                with self._lock:
                    self.hung_up.append(request)
                return False
            self._closing.wait(left)  # the client sent more: nothing to watch for
        return True


def _handler_for(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            self._serve()

        do_GET = do_POST  # noqa: N815

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Keep test output clean."""

        def _serve(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                parsed = json.loads(body) if body else None
            except ValueError:
                parsed = None
            parts = urlsplit(self.path)
            request = RecordedRequest(
                self.command, parts.path, parse_qs(parts.query),
                {k.lower(): v for k, v in self.headers.items()}, body, parsed,
            )
            reply = server._take(request)
            self.close_connection = True
            try:
                self._write(reply, request)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing left to do

        def _write(self, reply: Reply, request: RecordedRequest) -> None:
            def hold(seconds: float) -> bool:
                return not seconds or server._hold(seconds, self.connection, request)

            if not hold(reply.wait) or reply.no_response:
                return
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("Connection", "close")
            if reply.chunks is None:
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)
                return
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in filter(None, reply.chunks):  # an empty chunk would end the body
                if not hold(reply.delay):
                    return
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            if hold(reply.stall) and not reply.drop:
                self.wfile.write(b"0\r\n\r\n")

    return Handler
