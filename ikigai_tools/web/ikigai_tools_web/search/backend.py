"""The search backend interface: what every backend states, and the one result shape."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import urlsplit

SNIPPET_CHARS = 500
"""A snippet is cut to this many characters: twenty results stay well inside the output
limit, and a page's text is web_fetch's job."""
TITLE_CHARS = 300


@dataclass(frozen=True)
class Query:
    """One search, as every backend receives it.

    :param text: what to search for.
    :param max_results: how many results to return at most (1 to 20).
    :param allowed_domains: only results from these domains (and their subdomains).
    :param blocked_domains: never results from these domains (and their subdomains).
    :param freshness: ``day``, ``week``, ``month`` or ``year``: only pages that recent.
    """

    text: str
    max_results: int = 5
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()
    freshness: str | None = None

    def with_operators(self) -> str:
        """The query text with ``site:`` operators for the domain filters, for backends
        whose API has no parameter for them (the results are filtered again after)."""
        terms = [self.text]
        if self.allowed_domains:
            terms.append("(" + " OR ".join(f"site:{d}" for d in self.allowed_domains) + ")")
        terms.extend(f"-site:{d}" for d in self.blocked_domains)
        return " ".join(terms)

    def keeps(self, url: str) -> bool:
        """Whether a result at ``url`` passes the domain filters."""
        host = (urlsplit(url).hostname or "").lower()
        return ((not self.allowed_domains or _within(host, self.allowed_domains))
                and not _within(host, self.blocked_domains))


def _within(host: str, domains: Sequence[str]) -> bool:
    return any(host == d or host.endswith("." + d) for d in domains)


class BackendError(Exception):
    """A backend could not answer (rate limited, down, refused the key, unreadable reply):
    the next configured backend is asked. The message names the backend and the cause."""


class SearchBackend:
    """A web search service. Subclasses state their data and implement :meth:`search`.

    :cvar name: the name settings use (``search_backends``) and results carry.
    :cvar variables: the environment variables it needs (keys, IDs, URLs); all set means
        configured.
    :cvar signup: where to get a key or set the service up (shown with no backend set up).
    :cvar endpoint: the API's URL; the variable ``IKIGAI_SEARCH_<NAME>_URL`` replaces it
        (an API-compatible gateway or proxy).
    :cvar automatic: chosen without being named in ``search_backends`` when configured.
    :cvar order: where it comes in the automatic choice (lower first).
    """

    name: ClassVar[str]
    variables: ClassVar[tuple[str, ...]] = ()
    signup: ClassVar[str] = ""
    endpoint: ClassVar[str] = ""
    automatic: ClassVar[bool] = True
    order: ClassVar[int] = 50

    def configured(self, environ: Mapping[str, str]) -> bool:
        """Whether every variable it needs is set (and it has somewhere to send)."""
        return all(environ.get(v) for v in self.variables) and bool(self.url(environ))

    def url(self, environ: Mapping[str, str]) -> str:
        """The endpoint, or its replacement from the environment."""
        return environ.get(f"IKIGAI_SEARCH_{self.name.upper()}_URL") or self.endpoint

    def search(self, query: Query, http: Any, environ: Mapping[str, str]) -> list[dict[str, Any]]:
        """Ask the service; return results as ``{title, url, snippet, published}`` dicts
        (``published``: a date string or ``None``), best first.

        :param http: an ``httpx.Client`` whose timeouts are the ``web`` settings'.
        :raises BackendError: it cannot answer (see :func:`checked`).
        """
        raise NotImplementedError


def checked(backend: SearchBackend, response: Any) -> Any:
    """The JSON body of an httpx ``response``, or a :class:`BackendError` naming the
    status (429: rate limited; 5xx: unavailable; 401/403: the key) or the bad body."""
    status = response.status_code
    if status != 200:
        raise BackendError(f"{backend.name}: {_reason(status)} (HTTP {status})")
    try:
        return response.json()
    except ValueError as exc:
        raise BackendError(f"{backend.name}: the reply is not JSON") from exc


def _reason(status: int) -> str:
    if status == 429:
        return "rate limited"
    if status in (401, 403):
        return "the key was refused"
    return "unavailable" if status >= 500 else "the request was refused"


def result(title: Any, url: Any, snippet: Any, published: Any = None) -> dict[str, Any]:
    """One result in the common shape: title and snippet as plain text (some APIs mark the
    query's words with ``<strong>``) and cut, the date in ISO 8601 (``None`` when there is
    none, or it is no date: Brave's "3 days ago")."""
    return {"title": plain(title)[:TITLE_CHARS], "url": str(url or ""),
            "snippet": plain(snippet)[:SNIPPET_CHARS], "published": iso_date(published)}


def iso_date(value: Any) -> str | None:
    """``value`` (ISO 8601, or the RFC 2822 dates of HTTP and RSS) in ISO 8601, or ``None``."""
    if not isinstance(value, str) or not value.strip():
        return None
    from datetime import datetime
    from email.utils import parsedate_to_datetime

    text = value.strip()
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).isoformat()
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(text).isoformat()
    except (TypeError, ValueError):
        return None


def plain(value: Any) -> str:
    """``value`` as one line of text, without HTML tags or entities."""
    return " ".join(html.unescape(_TAG.sub("", str(value or ""))).split())


_TAG = re.compile(r"<[^>]+>")
