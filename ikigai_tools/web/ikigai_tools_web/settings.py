"""The web tools' settings: the ``web`` object of ``config.json``, checked key by key.

The core knows ``web`` as one JSON object (``Settings.web``); this module knows its keys,
their defaults and types, and which environment variable overrides a per-machine one.
The plugin hands the checked result to the tool process as ``IKIGAI_WEB_SETTINGS`` (JSON).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # kept off a cache hit's path (docs/web.md)
    from collections.abc import Mapping
    from typing import Any

DEFAULTS: dict[str, Any] = {
    "allow_private": [],
    "connect_timeout": 10.0,
    "timeout": 30.0,
    "max_bytes": 2 * 1024 * 1024,
    "robots_ignore": [],
    "cache_max_bytes": 100 * 1024 * 1024,
    "cache_ttl": 900.0,
    "search_backends": [],
    "searxng_url": "",
    "max_uses": 50,
    "fetch_only_seen_urls": True,
}
"""Every key of the ``web`` object and its default (docs/web.md explains each)."""

ENV_VARS = {"allow_private": "IKIGAI_WEB_ALLOW_PRIVATE"}
"""Per-machine keys an environment variable overrides (a comma-separated list)."""

ENV_NAME = "IKIGAI_WEB_SETTINGS"
"""The variable the tool process reads its checked settings from."""


class WebSettingsError(ValueError):
    """A ``web`` setting cannot be used; the message names it and the fix."""


def check(given: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    """The ``web`` settings: defaults, then ``given`` (config.json's ``web``), then the
    environment.

    :raises WebSettingsError: an unknown key (with a did-you-mean) or a wrong value.
    """
    values = dict(DEFAULTS)
    for key, value in given.items():
        if key not in DEFAULTS:
            import difflib

            close = difflib.get_close_matches(key, DEFAULTS, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(DEFAULTS)}"
            raise WebSettingsError(f"config.json: unknown key 'web.{key}' ({hint}); fix or "
                                   "remove it (docs/web.md)")
        values[key] = _value(key, value, "config.json")
    for key, var in ENV_VARS.items():
        if environ.get(var):
            values[key] = _value(key, environ[var].replace(",", " ").split(),
                                 f"environment variable {var}")
    return values


def _value(key: str, value: Any, origin: str) -> Any:
    """``value`` if it has the type of ``key``'s default, else a one-line error."""
    default = DEFAULTS[key]
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        expected = "true or false"
    elif isinstance(default, list):
        if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
            return value
        expected = "a list of strings"
    elif isinstance(default, str):
        if isinstance(value, str):
            return value
        expected = "a string"
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        if isinstance(default, float) or float(value).is_integer():
            return type(default)(value)
        expected = "a positive integer"
    else:
        expected = f"a positive {type(default).__name__}"
    raise WebSettingsError(f"{origin}: 'web.{key}' must be {expected}, got {value!r}; "
                           "fix or remove it")
