"""The address guard: which URLs may be fetched, and at which checked address.

A URL passes when its scheme is ``http``/``https`` and every address its host resolves to
is public, or allow-listed by ``web.allow_private``. The caller connects to the returned
address itself, so no second DNS lookup can swap it (DNS rebinding), and checks every
redirect hop again. Numeric hosts spelled other than as a dotted quad (``2130706433``,
``0x7f.1``, ``0177.0.0.1``) are refused outright: no browser user types them.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import SplitResult, urlsplit

TYPE_CHECKING = False
if TYPE_CHECKING:  # a cache hit checks an address with this module: kept light
    from collections.abc import Iterable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

REFUSED_NETWORKS = tuple(ipaddress.ip_network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15",
    "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    "::/128", "::1/128", "64:ff9b::/96", "100::/64", "2001:db8::/32", "fc00::/7",
    "fe80::/10", "fec0::/10", "ff00::/8",
))
"""Loopback, link-local (cloud metadata), RFC 1918, CGNAT, ULA, multicast, unspecified,
documentation and reserved ranges. IPv4-mapped and 6to4/NAT64 IPv6 are judged by the IPv4
address they carry."""

_OCTET = r"(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_DOTTED_QUAD = re.compile(rf"{_OCTET}(\.{_OCTET}){{3}}")
_NUMERIC_HOST = re.compile(r"(0x[0-9a-f]*|\d+)(\.(0x[0-9a-f]*|\d+)){0,3}\.?", re.IGNORECASE)


class Refused(Exception):
    """The URL may not be fetched; the message says why and what setting allows it."""


class Target:
    """A checked URL: where to connect, and what to call the host in Host and SNI."""

    __slots__ = ("url", "scheme", "host", "port", "address")

    def __init__(self, url: str, scheme: str, host: str, port: int,
                 address: IPAddress) -> None:
        self.url = url
        self.scheme = scheme
        self.host = host
        self.port = port
        self.address = address


def check_url(url: str, allowed: Iterable[str] = ()) -> Target:
    """Check ``url`` and resolve its host once.

    :param allowed: ``web.allow_private``: addresses, networks (CIDR) or host names that
        may be private.
    :raises Refused: a bad scheme or spelling, an unresolvable host, or a refused address.
    """
    parts = _split(url)
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise Refused(f"{url!r} has no host")
    if _NUMERIC_HOST.fullmatch(host) and not _DOTTED_QUAD.fullmatch(host):
        raise Refused(f"host {host!r} is a numeric address in an unusual spelling; "
                      "write it as a dotted quad")
    port = _port(parts)
    addresses = _resolve(host, port)
    allowed = tuple(allowed)
    for address in addresses:
        if refused(address) and not _allowed(host, address, allowed):
            raise Refused(
                f"{url} resolves to {address}, a private or reserved address; to fetch it, "
                f"add \"{host}\" (or its network) to web.allow_private in config.json")
    return Target(url, parts.scheme, host, port, addresses[0])


def refused(address: IPAddress) -> bool:
    """Whether ``address`` is private, local or reserved (judged by the IPv4 it may carry)."""
    if isinstance(address, ipaddress.IPv6Address):
        carried = address.ipv4_mapped or address.sixtofour
        if carried is None and address in ipaddress.ip_network("64:ff9b::/96"):
            carried = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if carried is not None:
            return refused(carried)
    return any(address in network for network in REFUSED_NETWORKS
               if network.version == address.version)


def address_allowed(address: IPAddress, host: str, allowed: Iterable[str]) -> bool:
    """Whether a fetch from ``address`` (of ``host``) passes the guard with no DNS lookup."""
    return not refused(address) or _allowed(host, address, tuple(allowed))


def _split(url: str) -> SplitResult:
    if not isinstance(url, str) or any(c.isspace() or ord(c) < 32 for c in url):
        raise Refused(f"{url!r} is not a URL (spaces or control characters)")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise Refused(f"scheme {parts.scheme or '(none)'!r} is not allowed; only http and https")
    if parts.username is not None or parts.password is not None:
        raise Refused(f"{url!r} carries credentials (user@host); they are never sent")
    return parts


def _port(parts: SplitResult) -> int:
    try:
        port = parts.port
    except ValueError as exc:
        raise Refused(f"{parts.netloc!r} has an invalid port") from exc
    return port or (443 if parts.scheme == "https" else 80)


def _resolve(host: str, port: int) -> list[IPAddress]:
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise Refused(f"cannot resolve host {host!r}: {exc}") from exc
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    return list(dict.fromkeys(addresses))


def _allowed(host: str, address: IPAddress, allowed: tuple[str, ...]) -> bool:
    for entry in allowed:
        if entry.lower().rstrip(".") == host:
            return True
        try:
            if address in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False
