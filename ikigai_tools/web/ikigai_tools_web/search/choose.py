"""Which backends answer, in which order, and the fallback from one to the next."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ikigai_tools_web.search.backend import BackendError, Query, SearchBackend


class SearchSetupError(Exception):
    """No backend can be asked: the message says what to set, and where to sign up."""


class SearchFailed(Exception):
    """Every chosen backend failed; the message names each and why."""


def chosen(known: Mapping[str, SearchBackend], names: Sequence[str],
           environ: Mapping[str, str]) -> list[SearchBackend]:
    """The backends to ask, in order: those ``names`` lists (the ``search_backends``
    setting), else every configured automatic one by ``order``.

    :raises SearchSetupError: a name no backend has, or nothing to ask.
    """
    for name in names:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"known: {', '.join(known)}"
            raise SearchSetupError(f"config.json: 'web.search_backends' names no backend "
                                   f"'{name}' ({hint})")
    if names:
        picked = [known[n] for n in dict.fromkeys(names)]  # a name twice is asked once
    else:
        picked = sorted((b for b in known.values() if b.automatic and b.configured(environ)),
                        key=lambda b: (b.order, b.name))
    if not picked:
        raise SearchSetupError(setup_message(known.values()))
    return picked


def setup_message(backends: Iterable[SearchBackend]) -> str:
    """What to set to search, for every backend: its variables and its sign-up page."""
    ways = []
    for backend in sorted(backends, key=lambda b: (b.order, b.name)):
        needs = " and ".join(requirements(backend)) or "nothing"
        ways.append(f"{backend.name}: set {needs} ({backend.signup})" if backend.automatic
                    else f"{backend.name}: no key, add \"{backend.name}\" to web.search_backends "
                         f"in config.json ({backend.signup})")
    return ("web_search has no search backend set up. Set one up and search again; "
            + "; ".join(ways) + ". See docs/web.md, 'web_search'.")


def requirements(backend: SearchBackend) -> list[str]:
    """The variables a backend needs, its URL's when it has no endpoint of its own."""
    url = [] if backend.endpoint else [f"IKIGAI_SEARCH_{backend.name.upper()}_URL"]
    return [*backend.variables, *url]


def search(query: Query, backends: Sequence[SearchBackend], http: Any,
           environ: Mapping[str, str]) -> dict[str, Any]:
    """Ask each backend in turn until one answers; its results in the one shape.

    :returns: ``{backend, results, failed}``: ``failed`` names each backend asked before
        and why it did not answer.
    :raises SearchFailed: none answered.
    """
    failed = []
    for backend in backends:
        try:
            if not backend.configured(environ):
                raise BackendError(f"{backend.name}: set {' and '.join(requirements(backend))}")
            found = ranked(query, backend.name, backend.search(query, http, environ))
        except Exception as exc:  # any backend's failure (a plugin's bug too): ask the next
            failed.append({"backend": backend.name, "error": _why(backend, exc)})
            continue
        return {"backend": backend.name, "results": found, "failed": failed}
    raise SearchFailed("no search backend answered: "
                       + "; ".join(f["error"] for f in failed))


def ranked(query: Query, backend: str, found: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The results the domain filters keep, at most ``max_results``, each with its
    ``rank`` (from 1) and ``backend``."""
    kept = [r for r in found if r["url"] and query.keeps(r["url"])][:query.max_results]
    return [{**r, "rank": i, "backend": backend} for i, r in enumerate(kept, 1)]


def _why(backend: SearchBackend, exc: Exception) -> str:
    """One line: a :class:`BackendError`'s own message, else the backend and the error."""
    if isinstance(exc, BackendError):
        return str(exc)
    import httpx

    if isinstance(exc, httpx.TransportError):
        return f"{backend.name}: unreachable ({type(exc).__name__}: {exc})"
    return f"{backend.name}: failed ({type(exc).__name__}: {exc})"
