"""SearXNG, self-hosted and keyless (``GET /search?format=json``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ikigai_tools_web.search.backend import (
    BackendError,
    Query,
    SearchBackend,
    checked,
    result,
)


class SearXNG(SearchBackend):
    """A SearXNG instance at ``IKIGAI_SEARCH_SEARXNG_URL`` (or ``web.searxng_url``); its
    ``settings.yml`` must list ``json`` under ``search.formats``."""

    name = "searxng"
    signup = "or web.searxng_url; self-host it: https://docs.searxng.org/admin/installation.html"
    order = 40

    def search(self, query: Query, http: Any, environ: Mapping[str, str]) -> list[dict[str, Any]]:
        """The instance's ``results`` (about 20 a page), cut to ``max_results``."""
        params = {"q": query.with_operators(), "format": "json", "pageno": 1}
        if query.freshness:
            params["time_range"] = query.freshness
        response = http.get(self.url(environ).rstrip("/") + "/search", params=params)
        if response.status_code == 403:
            raise BackendError("searxng: the instance refused format=json (HTTP 403); add "
                               "json to search.formats in its settings.yml")
        body = checked(self, response)
        return [result(r.get("title"), r.get("url"), r.get("content"), r.get("publishedDate"))
                for r in body.get("results") or []]
