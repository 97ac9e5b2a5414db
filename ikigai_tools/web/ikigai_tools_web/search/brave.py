"""Brave Search API (``GET /res/v1/web/search``, key in ``X-Subscription-Token``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ikigai_tools_web.search.backend import Query, SearchBackend, checked, result

FRESHNESS = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}


class Brave(SearchBackend):
    """Brave's independent index; ``count`` up to 20, ``freshness`` pd/pw/pm/py."""

    name = "brave"
    variables = ("BRAVE_API_KEY",)
    signup = "https://api-dashboard.search.brave.com/register"
    endpoint = "https://api.search.brave.com/res/v1/web/search"
    order = 10

    def search(self, query: Query, http: Any, environ: Mapping[str, str]) -> list[dict[str, Any]]:
        """Brave's ``web.results``; ``page_age`` is the date a page was published."""
        params = {"q": query.with_operators(), "count": query.max_results}
        if query.freshness:
            params["freshness"] = FRESHNESS[query.freshness]
        body = checked(self, http.get(self.url(environ), params=params, headers={
            "Accept": "application/json", "X-Subscription-Token": environ["BRAVE_API_KEY"]}))
        found = (body.get("web") or {}).get("results") or []
        return [result(r.get("title"), r.get("url"), r.get("description"), r.get("page_age"))
                for r in found]
