"""The search backends ikigai-tools-web ships (its plugin returns them from
``ikigai_search_backends``)."""

from __future__ import annotations

from ikigai_tools_web.search.backend import SearchBackend
from ikigai_tools_web.search.brave import Brave
from ikigai_tools_web.search.duckduckgo import DuckDuckGo
from ikigai_tools_web.search.google import Google
from ikigai_tools_web.search.searxng import SearXNG
from ikigai_tools_web.search.tavily import Tavily


def backends() -> list[SearchBackend]:
    """One of each built-in backend."""
    return [Brave(), Tavily(), Google(), SearXNG(), DuckDuckGo()]


def key_variables() -> set[str]:
    """The variables the built-in backends need (keys and IDs): only web_search gets them."""
    return {name for backend in backends() for name in backend.variables}
