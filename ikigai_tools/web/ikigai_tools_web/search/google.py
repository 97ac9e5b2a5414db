"""Google Programmable Search (the Custom Search JSON API, ``GET /customsearch/v1``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ikigai_tools_web.search.backend import Query, SearchBackend, checked, result

DATE_RESTRICT = {"day": "d1", "week": "w1", "month": "m1", "year": "y1"}
PAGE = 10
"""The API's most results per request."""


class Google(SearchBackend):
    """A Programmable Search Engine (``cx``) and an API key. Its own variable names:
    ``GOOGLE_API_KEY`` is a provider key ikigai keeps from every tool."""

    name = "google"
    variables = ("GOOGLE_CSE_API_KEY", "GOOGLE_CSE_ID")
    signup = "https://developers.google.com/custom-search/v1/overview"
    endpoint = "https://www.googleapis.com/customsearch/v1"
    order = 30

    def search(self, query: Query, http: Any, environ: Mapping[str, str]) -> list[dict[str, Any]]:
        """The ``items`` (absent when nothing matched); the publication date from the
        page's ``article:published_time`` meta tag when Google has it."""
        params = {"key": environ["GOOGLE_CSE_API_KEY"], "cx": environ["GOOGLE_CSE_ID"],
                  "q": query.with_operators(), "num": min(query.max_results, PAGE)}
        if query.freshness:
            params["dateRestrict"] = DATE_RESTRICT[query.freshness]
        body = checked(self, http.get(self.url(environ), params=params))
        return [result(r.get("title"), r.get("link"), r.get("snippet"), _published(r))
                for r in body.get("items") or []]


def _published(item: Mapping[str, Any]) -> Any:
    for tags in (item.get("pagemap") or {}).get("metatags") or []:
        if isinstance(tags, dict) and tags.get("article:published_time"):
            return tags["article:published_time"]
    return None
