"""DuckDuckGo's HTML page, the keyless fallback: scraped, so used only when named.

The endpoint is not an API: DuckDuckGo answers a few searches in a row, then a challenge
page (HTTP 202) or 429 for a while. It is never chosen automatically.
"""

from __future__ import annotations

from collections.abc import Mapping
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

from ikigai_tools_web.search.backend import BackendError, Query, SearchBackend, result

DATE_FILTER = {"day": "d", "week": "w", "month": "m", "year": "y"}


class DuckDuckGo(SearchBackend):
    """``POST https://html.duckduckgo.com/html/`` with ``q`` (and ``df`` for freshness)."""

    name = "duckduckgo"
    signup = "no sign-up: scraped HTML, rate limited after a few searches"
    endpoint = "https://html.duckduckgo.com/html/"
    automatic = False
    order = 90

    def search(self, query: Query, http: Any, environ: Mapping[str, str]) -> list[dict[str, Any]]:
        """The result links and snippets of the page, ads left out."""
        form = {"q": query.with_operators()}
        if query.freshness:
            form["df"] = DATE_FILTER[query.freshness]
        response = http.post(self.url(environ), data=form)
        if response.status_code in (202, 429):
            raise BackendError(f"duckduckgo: rate limited (HTTP {response.status_code})")
        if response.status_code != 200:
            raise BackendError(f"duckduckgo: unavailable (HTTP {response.status_code})")
        page = ResultPage()
        page.feed(response.text)
        return page.results


class ResultPage(HTMLParser):
    """Reads ``a.result__a`` (title, link) and ``.result__snippet`` (snippet)."""

    def __init__(self) -> None:
        super().__init__()
        self.results: list[dict[str, Any]] = []
        self._field: str | None = None
        self._text: list[str] = []
        self._href = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Start reading a title or a snippet."""
        classes = (dict(attrs).get("class") or "").split()
        if tag == "a" and "result__a" in classes:
            self._field, self._text, self._href = "title", [], dict(attrs).get("href") or ""
        elif "result__snippet" in classes and self.results:
            self._field, self._text = "snippet", []

    def handle_data(self, data: str) -> None:
        """Text inside the title or snippet being read."""
        if self._field:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        """Finish a title (a new result, unless it is an ad) or a snippet."""
        if self._field is None or tag not in ("a", "div", "td"):
            return
        text, field, self._field = "".join(self._text), self._field, None
        if field == "snippet":
            self.results[-1]["snippet"] = result("", "", text)["snippet"]
            return
        url = _target(self._href)
        if url:
            self.results.append(result(text, url, ""))


def _target(href: str) -> str | None:
    """The page a result link leads to (DuckDuckGo wraps it in ``/l/?uddg=``); ``None``
    for an ad or DuckDuckGo's own pages."""
    link = urlsplit(urljoin("https://duckduckgo.com/", href))
    if link.path == "/l/":
        target = parse_qs(link.query).get("uddg", [""])[0]
        link = urlsplit(target)
    host = link.hostname or ""
    if link.scheme not in ("http", "https") or host == "duckduckgo.com" or host.endswith(
            ".duckduckgo.com"):
        return None
    return link.geturl()
