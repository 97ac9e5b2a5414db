"""``ikigai_core.cancel`` on real sockets: setting a ``Cancel`` wakes the thread blocked on
a socket it watches, a socket given back is never touched, and the network backend it
wraps around httpcore's makes every read and write of a request watched (a Unix socket
here; ``tests/test_transport.py`` and ``tests/test_cancel_requests.py`` do it over TCP)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import httpcore
import pytest

from ikigai_core.cancel import CURRENT, Backend, Cancel, cancellable


def _blocked_read(sock: socket.socket, cancel: Cancel) -> tuple[threading.Thread, list[bytes]]:
    got: list[bytes] = []

    def read() -> None:
        with cancel.watching(sock):
            got.append(sock.recv(10))

    thread = threading.Thread(target=read)
    thread.start()
    return thread, got


def test_setting_a_cancel_wakes_the_thread_reading_its_socket():
    a, b = socket.socketpair()
    with a, b:
        cancel = Cancel()
        thread, got = _blocked_read(a, cancel)
        time.sleep(0.1)
        assert thread.is_alive()  # nothing to read: it waits
        cancel.set()
        thread.join(3)
        assert not thread.is_alive() and got == [b""]  # end-of-file, at once


def test_a_socket_watched_after_the_cancel_is_shut_at_once():
    a, b = socket.socketpair()
    with a, b:
        cancel = Cancel()
        cancel.set()
        thread, got = _blocked_read(a, cancel)
        thread.join(3)
        assert got == [b""]


def test_a_socket_given_back_is_never_shut():
    a, b = socket.socketpair()
    with a, b:
        cancel = Cancel()
        with cancel.watching(a):
            pass
        cancel.set()
        b.sendall(b"still open")
        assert a.recv(10) == b"still open"


def test_a_closed_socket_is_no_error():
    a, b = socket.socketpair()
    b.close()
    cancel = Cancel()
    with cancel.watching(a):
        a.close()
        cancel.set()


@pytest.fixture
def unix_server(tmp_path) -> Iterator[str]:
    path = str(tmp_path / "s.sock")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(path)
        server.listen()
        yield path


def test_the_backend_watches_the_reads_of_the_request_in_this_thread(unix_server):
    backend = Backend(httpcore.SyncBackend())
    stream = backend.connect_unix_socket(unix_server, timeout=5)
    cancel = Cancel()
    got: list[bytes] = []

    def request() -> None:
        CURRENT.set(cancel)  # what the transport sets around a request
        stream.write(b"GET / HTTP/1.1\r\n\r\n", timeout=5)
        got.append(stream.read(10, timeout=60))

    thread = threading.Thread(target=request)
    thread.start()
    time.sleep(0.1)
    cancel.set()
    thread.join(3)
    assert not thread.is_alive() and got == [b""]  # woken at once, not after 60 s
    assert stream.get_extra_info("socket") is not None
    stream.close()
    backend.sleep(0)


def test_a_request_without_a_cancel_is_not_watched(unix_server):
    stream = Backend(httpcore.SyncBackend()).connect_unix_socket(unix_server, timeout=5)
    stream.write(b"x", timeout=5)
    with pytest.raises(httpcore.ReadTimeout):
        stream.read(10, timeout=0.05)
    stream.close()


def test_cancellable_wraps_a_pool_once():
    pool = httpcore.ConnectionPool()
    cancellable(pool)
    wrapped = pool._network_backend
    cancellable(pool)
    assert isinstance(wrapped, Backend) and pool._network_backend is wrapped
