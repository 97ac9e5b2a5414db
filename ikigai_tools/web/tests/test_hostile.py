"""The address guard against hostile URLs: none may open a connection to a refused address.

Every URL goes through the fetching client the tool uses. Loopback spellings aim at a
listener on 127.0.0.1 that must never see a connection; every other connect the process
attempts is recorded, and must be none (or only to the allowed redirector).
"""

from __future__ import annotations

import socket

import pytest
from ikigai_tools_web.fetch.client import FetchError, Refused, fetch

from tests.support.fakeserver import Reply

LOOPBACK = [
    "http://127.0.0.1:{P}/", "https://127.0.0.1:{P}/", "http://localhost:{P}/",
    "http://LOCALHOST:{P}/", "http://localhost.:{P}/", "http://127.1:{P}/",
    "http://127.0.1:{P}/", "http://2130706433:{P}/", "http://0x7f000001:{P}/",
    "http://0x7f.0x0.0x0.0x1:{P}/", "http://0x7f.1:{P}/", "http://0177.0.0.1:{P}/",
    "http://017700000001:{P}/", "http://127.000.000.001:{P}/", "http://[::1]:{P}/",
    "http://[::ffff:127.0.0.1]:{P}/", "http://[::ffff:7f00:1]:{P}/",
    "http://[0:0:0:0:0:ffff:127.0.0.1]:{P}/", "http://0.0.0.0:{P}/", "http://0:{P}/",
    "http://[::]:{P}/", "http://127.255.255.254:{P}/", "http://user:pass@127.0.0.1:{P}/",
    "http://example.com@127.0.0.1:{P}/", "http://127.0.0.1:{P}#@example.com/",
    "http://[64:ff9b::7f00:1]:{P}/", "http://[2002:7f00:1::]:{P}/",
    "gopher://127.0.0.1:{P}/_GET%20/", "dict://127.0.0.1:{P}/info",
    "ftp://127.0.0.1:{P}/", "http://127.0.0.1:{P}/\r\nX-Injected: 1",
]
PRIVATE = [
    "http://169.254.169.254/latest/meta-data/", "http://169.254.170.2/v2/credentials",
    "http://[fe80::1]/", "http://[fd00:ec2::254]/", "http://[::ffff:a9fe:a9fe]/",
    "http://10.0.0.1/", "http://172.16.0.1/", "http://192.168.1.1/", "http://100.64.0.1/",
    "http://224.0.0.1/", "http://255.255.255.255/", "http://[ff02::1]/",
    "http://192.0.0.170/", "http://198.18.0.1/", "file:///etc/passwd", "data:text/plain,hi",
    "javascript:alert(1)",
]
REDIRECTS = ["http://169.254.169.254/", "http://[::1]:{P}/", "http://10.0.0.1/",
             "http://0x7f000001:{P}/", "http://[::ffff:127.0.0.1]:{P}/", "file:///etc/passwd"]


@pytest.fixture
def listener():
    """A socket on 127.0.0.1 that must never be connected to; yields its port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield sock.getsockname()[1]
        sock.settimeout(0.2)
        with pytest.raises(TimeoutError):
            sock.accept()


@pytest.fixture
def connects(monkeypatch):
    """Every address this process connects a socket to, in order."""
    seen: list[tuple[str, int]] = []
    real = socket.socket.connect

    def connect(self, address):
        seen.append(address[:2])
        return real(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    return seen


def test_the_corpus_is_big_enough():
    assert len(LOOPBACK) + len(PRIVATE) + len(REDIRECTS) >= 40


@pytest.mark.parametrize("template", LOOPBACK + PRIVATE)
def test_a_hostile_url_opens_no_connection(template, listener, connects):
    with pytest.raises(Refused):
        fetch(template.format(P=listener))
    assert connects == []


@pytest.mark.parametrize("target", REDIRECTS)
def test_every_redirect_hop_is_checked(target, site, listener, connects):
    site.routes["/go"] = Reply(302, {"Location": target.format(P=listener)})
    with pytest.raises(Refused):
        fetch(site.url + "/go", allowed=["127.0.0.1/32"])
    port = int(site.url.rsplit(":", 1)[1])
    assert connects == [("127.0.0.1", port)] and site.paths() == ["/go"]


def test_more_than_ten_redirects_are_refused(site):
    for i in range(12):
        site.routes[f"/{i}"] = Reply(302, {"Location": f"/{i + 1}"})
    with pytest.raises(FetchError, match="more than 10 redirects"):
        fetch(site.url + "/0", allowed=["127.0.0.1"])
    assert len(site.requests) == 11


def test_the_connection_goes_to_the_address_checked(site, monkeypatch, connects):
    """DNS rebinding: a second lookup would say 10.0.0.1; there is none."""
    port = int(site.url.rsplit(":", 1)[1])
    answers = iter(["127.0.0.1", "10.0.0.1", "10.0.0.1"])
    lookups = []
    real = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        if host != "rebind.test":
            return real(host, *args, **kwargs)
        lookups.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    site.routes["/page"] = Reply(200, {"Content-Type": "text/plain"}, b"ok")
    fetched = fetch(f"http://rebind.test:{port}/page", allowed=["127.0.0.1"])
    assert fetched.body == b"ok" and lookups == ["rebind.test"]
    assert connects == [("127.0.0.1", port)]
    assert site.requests[0].headers["host"] == f"rebind.test:{port}"


def test_an_allow_listed_network_is_fetched(site):
    site.routes["/in"] = Reply(200, {"Content-Type": "text/plain"}, b"intranet docs")
    assert fetch(site.url + "/in", allowed=["127.0.0.0/8"]).body == b"intranet docs"
