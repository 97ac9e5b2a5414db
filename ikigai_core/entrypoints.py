"""The installed plugins' entry points, remembered between runs.

Asking ``importlib.metadata`` imports the ``email`` package and reads every distribution on
``sys.path``, a large part of a warm ``ikigai tool list`` (the start-up ledger). So the
answer is cached under ``$IKIGAI_HOME/cache``, keyed by each ``sys.path`` folder holding
distributions: its metadata folders' names and the folder's own mtime (folders without any
do not count). Installing, upgrading, reinstalling or removing a distribution creates or
deletes such a metadata folder, which changes its parent's mtime. Listing them costs well
under a millisecond.

:func:`remembered` keeps other answers that follow from the installed plugins (the provider
key variables) under that same key.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ikigai_core.record import Record
from ikigai_core.statefiles import cached_json, write_private_json


def load_target(value: str) -> Any:
    """The object a ``module:attr`` string names (``attr`` may be dotted, or absent for the
    module itself), imported as importlib.metadata loads an entry point."""
    module, _, attr = value.partition(":")
    obj: Any = importlib.import_module(module.strip())
    for part in filter(None, attr.strip().split(".")):
        obj = getattr(obj, part)
    return obj


class PluginEntryPoint(Record):
    """One ``[ikigai]`` entry point: its name, ``module:attr`` value and distribution."""

    name: str
    value: str
    distribution: str | None
    version: str | None

    def load(self) -> Any:
        """Import the module (and attribute) the entry point names, as importlib.metadata does."""
        return load_target(self.value)

    def to_json(self) -> dict[str, str | None]:
        """Its fields, as the cache keeps them (``PluginEntryPoint(**fields)`` is it again)."""
        return {"name": self.name, "value": self.value, "distribution": self.distribution,
                "version": self.version}

    @property
    def label(self) -> str:
        """`` (distribution version)`` for messages, or nothing when unknown."""
        return f" ({self.distribution} {self.version})" if self.distribution else ""


METADATA_SUFFIXES = (".dist-info", ".egg-info")
T = TypeVar("T")


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

    def scan() -> Found:
        return Found([ep.to_json() for ep in _scan(group)])

    def load(value: Any) -> list[PluginEntryPoint]:
        return [PluginEntryPoint(**entry) for entry in value]

    return remembered(cache_dir / f"entry-points-{group}.json", scan, load)


class Found(Record):
    """What a :func:`remembered` computation found.

    :param value: the answer, a JSON value.
    :param files: the source files it was read from (a plugin's module): editing one, which
        an editable install allows without touching any metadata folder, asks again.
    :param keep: ``False`` when something failed on the way (a plugin that does not load):
        the answer is used once and not remembered.
    """

    value: Any
    files: Sequence[str] = ()
    keep: bool = True


def remembered(path: Path, compute: Callable[[], Found], load: Callable[[Any], T]) -> T:
    """``load`` of ``compute()``'s value, the value kept in ``path`` until a distribution is
    installed, upgraded or removed (the entry points' key) or one of its files changes. A
    missing, corrupt or unwritable cache only costs ``compute()`` again, and so does a value
    that ``load`` rejects (``ValueError``, ``KeyError``, ``TypeError``: hand-edited)."""
    key = _path_key()
    try:
        cached = cached_json(path)  # not one others could write: it names the keys to hide
        files = [name for name, *_ in cached["files"]]
        if cached["key"] == key and cached["files"] == _stamps(files):
            return load(cached["value"])
    except (OSError, ValueError, KeyError, TypeError):
        pass  # missing, corrupt or hand-edited: compute again
    found = compute()
    if found.keep:
        try:
            write_private_json(path, {"key": key, "files": _stamps(found.files),
                                      "value": found.value})
        except OSError:
            pass  # an unwritable home only costs the next start-up the work again
    return load(found.value)


def _stamps(files: Sequence[str]) -> list[list[Any]]:
    """``[path, mtime_ns, size]`` of each file (``None`` twice for a missing one)."""
    stamps: list[list[Any]] = []
    for name in files:
        try:
            info = os.stat(os.fspath(name))  # a number would be a file descriptor
            stamps.append([name, info.st_mtime_ns, info.st_size])
        except OSError:
            stamps.append([name, None, None])
    return stamps
