"""Each search API's documented reply, replayed by a local server, and a helper that runs
``web_search-tool`` as ikigai does. Every shape names the page it follows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.support.fakeserver import Reply

TOOL = str(Path(sys.executable).with_name("web_search-tool"))

SEARCH_VARIABLES = ("BRAVE_API_KEY", "TAVILY_API_KEY", "GOOGLE_CSE_API_KEY", "GOOGLE_CSE_ID")
"""Keys from the caller's shell that must not reach the tests' tool runs."""

PATHS = {"brave": "/res/v1/web/search", "tavily": "/search", "google": "/customsearch/v1",
         "searxng": "/searx", "duckduckgo": "/html/"}
"""Where each backend's fake API answers on the test site (SearXNG's instance root is
``/searx``: the backend adds ``/search``)."""

BRAVE = {
    # https://api-dashboard.search.brave.com/api-reference/web/search/get (WebSearchApiResponse:
    # web.results[] with title, url, description marked up with <strong>, age, page_age).
    "type": "search",
    "query": {"original": "pluggy hooks", "more_results_available": True},
    "web": {"type": "search", "family_friendly": True, "results": [
        {"type": "search_result", "title": "pluggy &mdash; Writing hooks",
         "url": "https://pluggy.readthedocs.io/en/latest/",
         "description": "How <strong>pluggy</strong> calls <strong>hooks</strong>.",
         "age": "March 1, 2026", "page_age": "2026-03-01T10:00:00", "language": "en",
         "profile": {"name": "Read the Docs"}, "extra_snippets": ["More text."]},
        {"type": "search_result", "title": "pytest plugins", "url": "https://docs.pytest.org/p",
         "description": "Writing plugins.", "language": "en"},
    ]},
}
BRAVE_RATE_LIMITED = {
    # https://api-dashboard.search.brave.com/app/documentation/web-search/responses (error
    # object: type ErrorResponse, error.code RATE_LIMITED, status 429; X-RateLimit-* headers).
    "type": "ErrorResponse", "time": 1764230000,
    "error": {"id": "e0", "status": 429, "code": "RATE_LIMITED",
              "detail": "Request rate limit exceeded for plan.",
              "meta": {"plan": "Free", "rate_limit": 1, "rate_current": 2}},
}
TAVILY = {
    # https://docs.tavily.com/api-reference/endpoint/search (200: query, answer, images,
    # results[] with title, url, content, score, raw_content; published_date on news).
    "query": "pluggy hooks", "answer": None, "images": [], "response_time": "1.67",
    "results": [
        {"title": "Tavily one", "url": "https://tavily.example/one", "content": "First.",
         "score": 0.81, "raw_content": None, "published_date": "Sun, 01 Mar 2026 10:00:00 GMT"},
        {"title": "Tavily two", "url": "https://sub.blocked.example/two", "content": "Second.",
         "score": 0.5, "raw_content": None},
    ],
}
SEARXNG = {
    # https://docs.searxng.org/dev/search_api.html (format=json: query, number_of_results,
    # results[] with url, title, content, engine, engines, positions, score, category,
    # publishedDate; answers, corrections, infoboxes, suggestions, unresponsive_engines).
    "query": "pluggy hooks", "number_of_results": 0, "answers": [], "corrections": [],
    "infoboxes": [], "suggestions": [], "unresponsive_engines": [],
    "results": [
        {"url": f"https://searx.example/{i}", "title": f"Result {i}", "content": f"Text {i}.",
         "engine": "duckduckgo", "engines": ["duckduckgo"], "positions": [i], "score": 1.0,
         "category": "general", "parsed_url": ["https", "searx.example", f"/{i}", "", "", ""],
         "template": "default.html", "publishedDate": "2026-03-01T00:00:00" if i == 1 else None}
        for i in range(1, 21)
    ],
}
GOOGLE = {
    # https://developers.google.com/custom-search/v1/reference/rest/v1/Search (kind, url,
    # queries, context, searchInformation, items[] with title, htmlTitle, link, displayLink,
    # snippet, htmlSnippet, formattedUrl, pagemap; no items when nothing matched).
    "kind": "customsearch#search",
    "url": {"type": "application/json", "template": "https://www.googleapis.com/customsearch/v1?q={searchTerms}"},
    "queries": {"request": [{"title": "Google Custom Search - pluggy", "totalResults": "2",
                             "searchTerms": "pluggy", "count": 2, "startIndex": 1}]},
    "searchInformation": {"searchTime": 0.2, "formattedSearchTime": "0.20",
                          "totalResults": "2", "formattedTotalResults": "2"},
    "items": [
        {"kind": "customsearch#result", "title": "Google one", "htmlTitle": "<b>Google</b> one",
         "link": "https://google.example/one", "displayLink": "google.example",
         "snippet": "Mar 1, 2026 ... the first.", "htmlSnippet": "the <b>first</b>.",
         "formattedUrl": "https://google.example/one",
         "pagemap": {"metatags": [{"og:title": "one",
                                   "article:published_time": "2026-03-01T10:00:00Z"}]}},
        {"kind": "customsearch#result", "title": "Google two", "link": "https://google.example/two",
         "displayLink": "google.example", "snippet": "The second."},
    ],
}
GOOGLE_EMPTY = {key: value for key, value in GOOGLE.items() if key != "items"}
GOOGLE_QUOTA = {
    # https://cloud.google.com/apis/design/errors (the JSON error of Google APIs; 429
    # RESOURCE_EXHAUSTED when the daily queries are used up).
    "error": {"code": 429, "message": "Quota exceeded for quota metric 'Queries'.",
              "errors": [{"message": "Quota exceeded.", "domain": "global",
                          "reason": "rateLimitExceeded"}],
              "status": "RESOURCE_EXHAUSTED"},
}
DUCKDUCKGO = """<!DOCTYPE html><html><body><div id="links" class="results">
<div class="result results_links results_links_deep result--ad">
 <h2 class="result__title"><a class="result__a" href="https://duckduckgo.com/y.js?ad_domain=ads.example">An ad</a></h2>
 <a class="result__snippet" href="https://duckduckgo.com/y.js">Buy now.</a></div>
<div class="result results_links results_links_deep web-result">
 <h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fddg.example%2Fone%3Fa%3D1&amp;rut=abc">DDG <b>one</b></a></h2>
 <a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fddg.example%2Fone">The <b>first</b> &amp; best.</a></div>
<div class="result results_links results_links_deep web-result">
 <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://ddg.example/two">DDG two</a></h2>
 <a class="result__snippet" href="https://ddg.example/two">The second.</a></div>
</div></body></html>"""
"""html.duckduckgo.com/html/ as served (no documented API: the markup scrapers rely on,
a.result__a wrapped in /l/?uddg= and a.result__snippet; ads link to /y.js)."""
DUCKDUCKGO_CHALLENGE = Reply(202, {"Content-Type": "text/html"},
                             b"<html><body><div class=anomaly-modal>Unfortunately, bots use "
                             b"DuckDuckGo too.</div></body></html>")
"""What DuckDuckGo answers once it rate-limits a client (HTTP 202 and a challenge page)."""


def html_reply(text: str) -> Reply:
    """A ``text/html`` page."""
    return Reply(200, {"Content-Type": "text/html; charset=utf-8"}, text.encode())


def endpoints(url: str, *names: str) -> dict[str, str]:
    """The variables that point each named backend at the test site, with test keys."""
    keys = {"brave": {"BRAVE_API_KEY": "brave-key"}, "tavily": {"TAVILY_API_KEY": "tvly-key"},
            "google": {"GOOGLE_CSE_API_KEY": "g-key", "GOOGLE_CSE_ID": "g-cx"}}
    env: dict[str, str] = {}
    for name in names:
        env[f"IKIGAI_SEARCH_{name.upper()}_URL"] = url + PATHS[name]
        env.update(keys.get(name, {}))
    return env


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without search keys, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in SEARCH_VARIABLES}
    return {**env, **extra}


def run_search(arguments: Mapping[str, Any], *, env: Mapping[str, str],
               web: Mapping[str, Any] | None = None, timeout: float = 60) -> dict[str, Any]:
    """Run the installed ``web_search-tool`` once, as ikigai does; its JSON answer."""
    child = clean_env(**env)
    if web is not None:
        child["IKIGAI_WEB_SETTINGS"] = json.dumps(web)
    done = subprocess.run([TOOL], input=json.dumps(arguments), capture_output=True, text=True,
                          env=child, timeout=timeout, check=True)
    return json.loads(done.stdout)

