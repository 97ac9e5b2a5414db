"""robots.txt for model-initiated fetches, under ikigai's own User-Agent.

A 401 or 403 on ``robots.txt`` means the whole site is off limits; any other 4xx (none
there), or a missing file, allows everything; a 5xx or a failure to fetch it denies, as
RFC 9309 asks. The user lifts it per domain with ``web.robots_ignore``.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

ROBOTS_AGENT = "ikigai-web-fetch"
MAX_ROBOTS_BYTES = 512 * 1024


def ignored(host: str, domains: Iterable[str]) -> bool:
    """Whether ``host`` is one of ``domains`` or under one of them."""
    host = host.lower().rstrip(".")
    return any(host == d.lower() or host.endswith("." + d.lower().lstrip(".")) for d in domains)


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url``."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rsplit('@', 1)[-1].lower()}"


def allowed(url: str, status: int, body: str) -> bool:
    """Whether the robots.txt answer (``status``, ``body``) lets ikigai fetch ``url``."""
    if status in (401, 403) or status >= 500 or status == 0:
        return False
    if status >= 400:
        return True
    from protego import Protego

    return bool(Protego.parse(body).can_fetch(url, ROBOTS_AGENT))
