"""Tavily (``POST /search``, ``Authorization: Bearer``), a search API made for agents."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ikigai_tools_web.search.backend import Query, SearchBackend, checked, result


class Tavily(SearchBackend):
    """Tavily's ``/search``: domain filters and ``time_range`` are parameters of its own."""

    name = "tavily"
    variables = ("TAVILY_API_KEY",)
    signup = "https://app.tavily.com"
    endpoint = "https://api.tavily.com/search"
    order = 20

    def search(self, query: Query, http: Any, environ: Mapping[str, str]) -> list[dict[str, Any]]:
        """Tavily's ``results``; ``published_date`` comes with news results only."""
        request: dict[str, Any] = {"query": query.text, "max_results": query.max_results,
                                   "search_depth": "basic", "include_answer": False}
        if query.allowed_domains:
            request["include_domains"] = list(query.allowed_domains)
        if query.blocked_domains:
            request["exclude_domains"] = list(query.blocked_domains)
        if query.freshness:
            request["time_range"] = query.freshness
        body = checked(self, http.post(self.url(environ), json=request, headers={
            "Authorization": f"Bearer {environ['TAVILY_API_KEY']}"}))
        return [result(r.get("title"), r.get("url"), r.get("content"), r.get("published_date"))
                for r in body.get("results") or []]
