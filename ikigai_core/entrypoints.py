"""The installed plugins' entry points, remembered between runs.

Asking ``importlib.metadata`` costs about 20 ms a start-up (it imports the ``email``
package and reads every distribution on ``sys.path``): a quarter of a warm
``ikigai tool list``. So the answer is cached under ``$IKIGAI_HOME/cache``, keyed by each
``sys.path`` folder holding distributions: its metadata folders' names and the folder's
own mtime (folders without any do not count). Installing, upgrading, reinstalling or
removing a distribution creates or deletes such a metadata folder, which changes its
parent's mtime. Listing them costs well under a millisecond.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any, NamedTuple

from ikigai_core.statefiles import write_private_json


class PluginEntryPoint(NamedTuple):
    """One ``[ikigai]`` entry point: its name, ``module:attr`` value and distribution."""

    name: str
    value: str
    distribution: str | None
    version: str | None

    def load(self) -> Any:
        """Import the module (and attribute) the entry point names, as importlib.metadata does."""
        module, _, attr = self.value.partition(":")
        obj: Any = importlib.import_module(module.strip())
        for part in filter(None, attr.strip().split(".")):
            obj = getattr(obj, part)
        return obj

    @property
    def label(self) -> str:
        """`` (distribution version)`` for messages, or nothing when unknown."""
        return f" ({self.distribution} {self.version})" if self.distribution else ""


METADATA_SUFFIXES = (".dist-info", ".egg-info")


def _path_key() -> list[list[Any]]:
    """Each ``sys.path`` folder holding distributions: its mtime and their metadata folders.

    Folders without any are left out: ``sys.path[0]`` is the script's folder for the console
    script but ``""`` for ``python -c``, and alternating the two must not invalidate the cache.
    """
    key: list[list[Any]] = []
    for entry in sys.path:
        try:
            with os.scandir(entry or ".") as it:
                found = sorted(d.name for d in it if d.name.endswith(METADATA_SUFFIXES))
            if found:
                key.append([entry, os.stat(entry or ".").st_mtime_ns, found])
        except OSError:
            continue
    return key


def _scan(group: str) -> list[PluginEntryPoint]:
    from importlib.metadata import entry_points

    found = []
    for ep in entry_points(group=group):
        dist = ep.dist
        found.append(PluginEntryPoint(ep.name, ep.value, dist.name if dist else None,
                                      dist.version if dist else None))
    return found


def plugin_entry_points(group: str, cache_dir: Path | None = None) -> list[PluginEntryPoint]:
    """Every entry point of ``group``; remembered in ``cache_dir`` when one is given."""
    if cache_dir is None:
        return _scan(group)
    path = cache_dir / f"entry-points-{group}.json"
    key = _path_key()
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
        if cached["key"] == key:
            return [PluginEntryPoint(**entry) for entry in cached["entry_points"]]
    except (OSError, ValueError, KeyError, TypeError):
        pass  # missing, corrupt or hand-edited: ask importlib.metadata again
    found = _scan(group)
    try:
        write_private_json(path, {"key": key, "entry_points": [ep._asdict() for ep in found]})
    except OSError:
        pass  # an unwritable home only costs the next start-up the scan again
    return found
