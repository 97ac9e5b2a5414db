"""The fetching client: redirects followed by hand, each hop checked by the guard, the
connection made to the checked address, the body streamed under a byte cap and a deadline.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urljoin

import httpx

from ikigai_tools_web.fetch.decode import ACCEPT_ENCODING, Decoder
from ikigai_tools_web.fetch.guard import IPAddress, Refused, Target, check_url

MAX_REDIRECTS = 10
USER_AGENT = "ikigai-web-fetch/0.1 (an LLM agent's fetch tool; obeys robots.txt)"
REDIRECTS = (301, 302, 303, 307, 308)


class FetchError(Exception):
    """The fetch failed; ``code`` is the tool's ``error_code``."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Fetched:
    """One final response: its body (decoded, at most the cap) and what describes it."""

    url: str
    final_url: str
    status: int
    headers: dict[str, str]
    address: IPAddress
    host: str
    body: bytes = b""
    capped: bool = False
    refused_type: bool = False
    length: int | None = None

    @property
    def content_type(self) -> str:
        """The media type, lower case, without parameters."""
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


@dataclass(frozen=True)
class Limits:
    """``connect`` and ``total`` seconds, and ``max_bytes`` decoded bytes kept."""

    connect: float = 10.0
    total: float = 30.0
    max_bytes: int = 2 * 1024 * 1024


def fetch(url: str, *, allowed: Iterable[str] = (), limits: Limits = Limits(),
          headers: dict[str, str] | None = None,
          wanted: Iterable[str] | None = None,
          before_hop: Callable[[Target], None] | None = None) -> Fetched:
    """GET ``url``, following up to :data:`MAX_REDIRECTS` redirects, each checked.

    :param allowed: ``web.allow_private``.
    :param headers: extra request headers (conditional ones for revalidation).
    :param wanted: a predicate's worth of media types: a final response of another type
        is not read (``refused_type``), only described.
    :param before_hop: called with each hop's checked target (the first URL's included)
        before its request is sent; what it raises stops the fetch (robots.txt).
    :raises Refused: a hop the guard refuses. :raises FetchError: anything else.
    """
    allowed = tuple(allowed)
    deadline = time.monotonic() + limits.total
    timeout = httpx.Timeout(limits.total, connect=limits.connect)
    with httpx.Client(trust_env=False, follow_redirects=False, timeout=timeout) as client:
        current = url
        for _hop in range(MAX_REDIRECTS + 1):
            target = check_url(current, allowed)
            if before_hop is not None:
                before_hop(target)
            try:
                fetched = _get(client, target, url, limits, deadline, headers or {}, wanted)
            except httpx.TimeoutException as exc:
                raise FetchError(f"{current}: timed out ({type(exc).__name__}); "
                                 "web.timeout and web.connect_timeout set the limits",
                                 "timeout") from exc
            except (httpx.HTTPError, OSError) as exc:
                raise FetchError(f"{current}: {type(exc).__name__}: {exc}", "fetch_failed") from exc
            location = fetched.headers.get("location")
            if fetched.status not in REDIRECTS or not location:
                return fetched
            current = urljoin(current, location)
    raise FetchError(f"{url}: more than {MAX_REDIRECTS} redirects", "too_many_redirects")


def _get(client: httpx.Client, target: Target, original: str, limits: Limits,
         deadline: float, headers: dict[str, str], wanted: Iterable[str] | None) -> Fetched:
    """One request to the checked address, read under the cap and the deadline."""
    request = client.build_request(
        "GET", httpx.URL(target.url).copy_with(host=str(target.address)),
        headers={"Host": _host_header(target), "User-Agent": USER_AGENT,
                 "Accept-Encoding": ACCEPT_ENCODING, **headers},
        extensions={"sni_hostname": target.host})
    response = client.send(request, stream=True)
    try:
        fetched = Fetched(original, target.url, response.status_code,
                          {k.lower(): v for k, v in response.headers.items()},
                          target.address, target.host)
        length = response.headers.get("content-length", "")
        fetched.length = int(length) if length.isdigit() else None
        if fetched.status in REDIRECTS or (wanted is not None and not _wanted(fetched, wanted)):
            fetched.refused_type = fetched.status not in REDIRECTS
            return fetched
        _read(response, fetched, limits, deadline)
        return fetched
    finally:
        response.close()


def _read(response: httpx.Response, fetched: Fetched, limits: Limits, deadline: float) -> None:
    from ikigai_tools_web.fetch.decode import UnsupportedEncoding

    try:
        decoder = Decoder(response.headers.get("content-encoding", ""), limits.max_bytes)
    except UnsupportedEncoding as exc:
        raise FetchError(f"{fetched.final_url}: {exc}", "unsupported_encoding") from exc
    parts = []
    for chunk in response.iter_raw():
        parts.append(decoder.feed(chunk))
        if decoder.full:
            fetched.capped = True
            break
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("the whole fetch took longer than web.timeout")
    fetched.body = b"".join(parts)


def _wanted(fetched: Fetched, wanted: Iterable[str]) -> bool:
    kind = fetched.content_type
    return not kind or any(kind == w or (w.endswith("/") and kind.startswith(w)) or
                           (w.startswith("+") and kind.endswith(w)) for w in wanted)


def _host_header(target: Target) -> str:
    default = 443 if target.scheme == "https" else 80
    host = f"[{target.host}]" if ":" in target.host else target.host
    return host if target.port == default else f"{host}:{target.port}"


__all__ = ["FetchError", "Fetched", "Limits", "Refused", "fetch"]
