"""Cancelling a prompt at once, even while its provider request waits on the network.

A :class:`Cancel` is the event a session's prompt is stopped by (``Session.cancel``, a
budget's seconds, a sub-agent's ``kill``). Setting it, from any thread, also shuts down
the socket a request sent with it (:func:`~ikigai_core.transport.send_turn`'s ``cancel``)
is reading or writing then: the thread waiting for the model gets end-of-file at once,
and the transport raises :class:`Cancelled` instead of waiting for the answer or the read
timeout. The sockets are found by :class:`Backend`, which wraps the HTTP client's network
backend: each read and write tells the request's :class:`Cancel` which socket it uses.
The connection is closed as any broken one is, so nothing leaks and no other request's
connection is touched. Standard library only; httpcore is not imported here.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

from ikigai_core.errors import IkigaiError

if TYPE_CHECKING:
    import httpcore

T = TypeVar("T")


class Cancelled(IkigaiError):
    """The prompt was cancelled (:meth:`ikigai_core.session.Session.cancel`)."""


class Cancel(threading.Event):
    """An event that, once set, also hangs up on the requests in flight sent with it."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()

    def set(self) -> None:
        """Set the event and shut down the sockets its requests are using now."""
        with self._lock:
            super().set()
            for sock in self._sockets:
                _shut(sock)

    @contextmanager
    def watching(self, sock: socket.socket) -> Iterator[None]:
        """Around one read or write on ``sock``: a :meth:`set` meanwhile (or before) shuts
        it down. Under the lock, so a socket is never shut once it is given back."""
        with self._lock:
            if self.is_set():
                _shut(sock)
            self._sockets.add(sock)
        try:
            yield
        finally:
            with self._lock:
                self._sockets.discard(sock)


CURRENT: ContextVar[Cancel | None] = ContextVar("ikigai_cancel", default=None)
"""The :class:`Cancel` of the request this thread sends (set by the transport)."""


def _shut(sock: socket.socket) -> None:
    """Shut ``sock`` down both ways: a thread blocked on it wakes up with end-of-file. The
    plain socket's method, also for a TLS socket: its own would drop its TLS state under
    the reading thread."""
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:  # closed or not connected already: nothing to wake
        pass


class Stream:
    """A network stream whose reads and writes the request's :class:`Cancel` can cut."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self.inner = inner
        self.sock: socket.socket | None = inner.get_extra_info("socket")

    def _watched(self, work: Callable[[], T]) -> T:
        cancel = CURRENT.get()
        if cancel is None or self.sock is None:
            return work()
        with cancel.watching(self.sock):
            return work()

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Read, as the wrapped stream does."""
        return self._watched(lambda: self.inner.read(max_bytes, timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Write, as the wrapped stream does."""
        self._watched(lambda: self.inner.write(buffer, timeout))

    def close(self) -> None:
        """Close the wrapped stream."""
        self.inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> Stream:
        """The TLS stream over this one, wrapped too. A cancel cuts its handshake through
        a twin of the socket (the one being wrapped is detached meanwhile), closed after."""
        cancel = CURRENT.get()
        if cancel is None or self.sock is None:
            return Stream(self.inner.start_tls(ssl_context, server_hostname, timeout))
        with self.sock.dup() as twin, cancel.watching(twin):
            return Stream(self.inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        """What the wrapped stream says."""
        return self.inner.get_extra_info(info)


class Backend:
    """A network backend (httpcore's interface) whose streams are :class:`Stream` s."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self.inner = inner

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> Stream:
        """Connect, as the wrapped backend does."""
        return Stream(self.inner.connect_tcp(host, port, timeout, local_address,
                                             socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> Stream:
        """Connect, as the wrapped backend does."""
        return Stream(self.inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        """Sleep, as the wrapped backend does."""
        self.inner.sleep(seconds)


def cancellable(pool: Any) -> None:
    """Let :class:`Cancel` s cut the requests of httpcore connection ``pool`` (an
    ``httpx.HTTPTransport``'s): its network backend is wrapped in a :class:`Backend`.
    httpx takes no backend of its own, so this is set on the pool it built."""
    backend = getattr(pool, "_network_backend", None)
    if backend is not None and not isinstance(backend, Backend):
        pool._network_backend = Backend(backend)
