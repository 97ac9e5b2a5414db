"""``web_search``: one query, one result shape, whichever search backend answers.

Backends are plugins (the ``ikigai_search_backends`` hook); a third-party one subclasses
:class:`SearchBackend`. Nothing here is imported at ikigai start-up: the tool process
loads it, and httpx only when a backend is asked.
"""

from ikigai_tools_web.search.backend import BackendError, Query, SearchBackend

__all__ = ["BackendError", "Query", "SearchBackend"]
