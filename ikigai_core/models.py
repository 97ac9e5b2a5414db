"""The models each provider offers (``ikigai models``): asked of its model-listing endpoint
(:attr:`~ikigai_core.providers.Provider.models_path`), kept a day in
``$IKIGAI_HOME/cache/models.json``; when the API cannot be asked, the last list kept, else
the models the provider knows offline. A model name nobody lists is warned about, with
the closest listed name, and still used."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ikigai_core.errors import IkigaiError, KeyRejected, ProviderError
from ikigai_core.statefiles import read_cache, write_private_json
from ikigai_core.wire import base_url

if TYPE_CHECKING:
    from ikigai_core.providers import Provider

CACHE_FILE = "models.json"
CACHE_VERSION = 1
MAX_AGE = 24 * 3600
"""Seconds a listing is used before the API is asked again."""
LIVE, CACHED, KNOWN = "api", "cache", "known"


@dataclass(frozen=True)
class Listing:
    """One provider's models, each with its context window (``None``: unknown).

    :param source: ``api`` (asked now), ``cache`` (asked earlier) or ``known`` (offline).
    :param problem: why the API was not asked or did not answer, one line, when it was not.
    """

    provider: str
    models: Mapping[str, int | None]
    source: str
    problem: str | None = None


def list_models(provider: Provider, environ: Mapping[str, str], home: Path, *,
                refresh: bool = False) -> Listing:
    """``provider``'s models: a fresh cached listing (unless ``refresh``), else the API's
    (then cached), else the last cached one or the known models, with the problem."""
    cache = home / "cache" / CACHE_FILE
    url = base_url(environ, provider.base_url_env, provider.default_base_url)
    kept = read_cache(cache, CACHE_VERSION, "providers").get(provider.name)
    if not (isinstance(kept, dict) and kept.get("base_url") == url
            and isinstance(kept.get("time"), (int, float))
            and isinstance(kept.get("models"), dict)):
        kept = None
    if provider.models_path is None:
        return Listing(provider.name, dict(sorted(provider.known_models.items())), KNOWN)
    if kept is not None and not refresh and time.time() - kept["time"] < MAX_AGE:
        return Listing(provider.name, kept["models"], CACHED)
    try:
        models = _fetch(provider, provider.models_path, environ, home)
    except IkigaiError as exc:
        if kept is not None:
            return Listing(provider.name, kept["models"], CACHED, str(exc))
        return Listing(provider.name, dict(sorted(provider.known_models.items())), KNOWN,
                       str(exc))
    _keep(cache, provider.name, {"base_url": url, "time": time.time(), "models": models})
    return Listing(provider.name, models, LIVE)


def _fetch(provider: Provider, path: str, environ: Mapping[str, str],
           home: Path) -> dict[str, int | None]:
    """Ask ``provider``'s listing endpoint ``path`` (with its key: a variable or a stored
    one); the context windows it omits come from its ``known_models``. Every failure is
    one :class:`ProviderError` without the key in it."""
    from ikigai_core.keys import stored_key_rejected, with_stored_key
    from ikigai_core.transport import http_timeout, key_variable, redact

    env = dict(environ)
    origin = with_stored_key(provider, env, home)
    key_env = key_variable(provider, env)
    key = "" if key_env is None else env[key_env]
    url = base_url(env, provider.base_url_env, provider.default_base_url) + path
    headers = dict(provider.headers)
    if key:
        headers[provider.auth_header] = provider.auth_prefix + key
    try:
        return _get(provider, url, headers, http_timeout(env), key_env)
    except KeyRejected as exc:
        if origin is None:
            raise
        raise ProviderError(stored_key_rejected(provider.name, origin, exc.status)) from None
    except ProviderError as exc:
        raise ProviderError(redact(str(exc), key)) from None


def _get(provider: Provider, url: str, headers: Mapping[str, str], timeout: Any,
         key_env: str | None) -> dict[str, int | None]:
    """GET the listing and read it."""
    from ikigai_core.transport import _import_httpx

    _import_httpx()
    import httpx

    try:
        response = httpx.get(url, headers=headers, timeout=timeout)
    except httpx.HTTPError as exc:
        raise ProviderError(f"cannot reach {provider.name} at {url}: {exc}") from None
    status = response.status_code
    if status != 200:
        message = provider.error_message(status, response.content, model="", key_env=key_env)
        if key_env and provider.rejects_key(status, response.content):
            raise KeyRejected(message, status=status)
        raise ProviderError(message)
    try:
        found = provider.read_models(response.json())
    except ValueError as exc:
        raise ProviderError(f"{provider.name}'s model list is not what its API documents "
                            f"({exc})") from None
    return {name: window if window is not None else provider.known_models.get(name)
            for name, window in sorted(found.items())}


def _keep(cache: Path, provider: str, entry: dict[str, Any]) -> None:
    """Add ``provider``'s listing to the cache file; a cache that cannot be written is
    only a shortcut lost."""
    found = read_cache(cache, CACHE_VERSION, "providers")
    found[provider] = entry
    try:
        write_private_json(cache, {"version": CACHE_VERSION, "providers": found})
    except OSError:
        pass


def cached_models(provider: Provider, home: Path,
                  environ: Mapping[str, str]) -> Mapping[str, Any]:
    """The models of ``provider``'s cached listing (of any age) for the base URL in use,
    each with its context window; ``{}`` when none is cached. Nothing is asked of the
    network."""
    url = base_url(environ, provider.base_url_env, provider.default_base_url)
    kept = read_cache(home / "cache" / CACHE_FILE, CACHE_VERSION, "providers").get(
        provider.name)
    if isinstance(kept, dict) and kept.get("base_url") == url and isinstance(
            kept.get("models"), dict):
        return kept["models"]  # type: ignore[no-any-return]
    return {}


def known_names(provider: Provider, home: Path, environ: Mapping[str, str]) -> list[str]:
    """The model names to check a name against, without the network: the cached listing
    (of any age) for this base URL, else the known models."""
    return list(cached_models(provider, home, environ) or provider.known_models)


def unknown_model(provider: Provider, model: str, home: Path,
                  environ: Mapping[str, str]) -> str | None:
    """One line when ``model`` is not among ``provider``'s known names (with the closest
    one, difflib's pick), else ``None``; nothing is asked of the network."""
    names = known_names(provider, home, environ)
    if not names or model in names:
        return None
    import difflib  # lazy: only a name to check imports it

    close = difflib.get_close_matches(model, names, n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    return (f"model '{model}' is not one {provider.name} lists; {hint}sent as given "
            f"(ikigai models --provider {provider.name} lists them)")
