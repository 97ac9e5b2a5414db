"""Provider API keys kept by ``ikigai keys``: in the system keyring when one is available
(the optional ``keyring`` library, ``pip install 'ikigai[keyring]'``), else in
``$IKIGAI_HOME/keys.json`` (0600, refused when others can read it). Environment variables
always win.

``keys.json`` is also the index of what is stored where, so listing keys or choosing a
provider never imports ``keyring`` (200 ms, and as much again to find its backend): it is
imported by ``keys set``/``remove`` and when the provider a run uses has its key there.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ikigai_core.errors import ConfigError, UsageError
from ikigai_core.statefiles import locked, parse_json, read_state, write_private_json

if TYPE_CHECKING:
    from ikigai_core.providers import Provider

KEYS_FILE = "keys.json"
SERVICE = "ikigai"
"""The keyring service every key is stored under; the provider's name is the user name."""
VERSION = 1
KEYRING = "keyring"
FILE = "file"


class KeyStore:
    """The keys stored in one ``$IKIGAI_HOME``, by provider name."""

    def __init__(self, home: Path) -> None:
        self.path = home / KEYS_FILE

    def stored(self) -> dict[str, str]:
        """Where each provider's stored key is: ``keyring`` or ``file``."""
        return {name: entry["store"] for name, entry in self._entries().items()}

    def get(self, provider: str) -> str | None:
        """The key stored for ``provider``, ``None`` when there is none."""
        entry = self._entries().get(provider)
        if entry is None:
            return None
        if entry["store"] == FILE:
            key: str = entry["key"]
            return key
        with keyring_failures():
            found: str | None = _keyring_module(required=True).get_password(SERVICE, provider)
        if not found:
            raise ConfigError(f"the key of '{provider}' is gone from the system keyring; "
                              f"store it again: ikigai keys set {provider}")
        return found

    def set(self, provider: str, key: str) -> str:
        """Store ``key`` for ``provider`` (replacing any); return where it went."""
        keyring = _keyring_module(required=False)
        with locked(self.path):
            entries = self._entries()
            if keyring is not None:
                with keyring_failures():
                    keyring.set_password(SERVICE, provider, key)
                entries[provider] = {"store": KEYRING}
            else:
                entries[provider] = {"store": FILE, "key": key}
            self._write(entries)
        return entries[provider]["store"]

    def remove(self, provider: str) -> None:
        """Forget the key stored for ``provider``; a :class:`UsageError` when there is none."""
        with locked(self.path):
            entries = self._entries()
            entry = entries.pop(provider, None)
            if entry is None:
                raise UsageError(f"no key is stored for '{provider}' (ikigai keys list "
                                 "shows the keys)")
            if entry["store"] == KEYRING:
                with keyring_failures():
                    _forget(provider)
            self._write(entries)

    def _entries(self) -> dict[str, dict[str, str]]:
        raw = read_state(self.path)
        if raw is None:
            return {}
        _refuse_readable(self.path)
        try:
            data = parse_json(raw)
        except ValueError:
            data = None
        entries = data.get("keys") if isinstance(data, dict) else None
        if not (isinstance(entries, dict) and all(map(_valid, entries.values()))):
            raise ConfigError(f"{self.path} is not a keys file of ikigai's; fix or remove it, "
                              "then store the keys again with ikigai keys set")
        return entries

    def _write(self, entries: Mapping[str, Any]) -> None:
        write_private_json(self.path, {"version": VERSION, "keys": dict(entries)})


def _valid(entry: Any) -> bool:
    """Whether ``entry`` is a keyring entry or a file entry holding a key."""
    return isinstance(entry, dict) and (
        entry.get("store") == KEYRING
        or (entry.get("store") == FILE and isinstance(entry.get("key"), str)))


def _refuse_readable(path: Path) -> None:
    """A keys file others can read holds keys they may have copied: refuse it."""
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise ConfigError(f"{path} can be read by other users (mode {mode:o}); ikigai refuses "
                          f"it: `chmod 600 {path}`, and replace keys others may have read")


@contextmanager
def keyring_failures() -> Iterator[None]:
    """A keyring backend's own failure (locked, no D-Bus, refused: backends raise many
    kinds) as one :class:`ConfigError`; nothing is changed."""
    try:
        yield
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001  any backend's failure is one line
        said = " ".join(str(exc).split()) or type(exc).__name__
        raise ConfigError(f"the system keyring failed ({said}); unlock it and try again, "
                          "or set the provider's key variable instead") from None


def _keyring_module(*, required: bool) -> Any:
    """The ``keyring`` module when it is installed and finds a usable backend (not its
    ``fail`` or ``null`` one, which ``PYTHON_KEYRING_BACKEND`` may choose); else ``None``,
    or with ``required`` a :class:`ConfigError` (a key stored there cannot be read)."""
    module: Any = None
    try:
        import keyring as module
    except ImportError:
        pass
    if module is not None:
        with keyring_failures():
            if module.get_keyring().priority > 0:
                return module
    if required:
        raise ConfigError("a key is stored in the system keyring, which cannot be reached "
                          "now; store it again with ikigai keys set, or set its variable")
    return None


def _forget(provider: str) -> None:
    """Delete ``provider``'s key from the keyring, when it is still there."""
    keyring = _keyring_module(required=True)
    if keyring.get_password(SERVICE, provider) is not None:
        keyring.delete_password(SERVICE, provider)


def key_source(provider: Provider, environ: Mapping[str, str],
               stored: Mapping[str, str]) -> str | None:
    """Where ``provider``'s key comes from: its variable's name, ``keyring``, ``keys.json``,
    or ``None`` (no key). ``stored`` is :meth:`KeyStore.stored`."""
    for var in provider.api_key_env:
        if environ.get(var):
            return var
    where = stored.get(provider.name)
    return None if where is None else KEYS_FILE if where == FILE else KEYRING


def with_stored_key(provider: Provider, environ: dict[str, str], home: Path) -> str | None:
    """Put ``provider``'s stored key in ``environ`` under its first key variable, unless
    one of its variables is set already (they win): from here on it is a provider key like
    any other, withheld from tools and redacted from errors. Returns where it was stored
    (``keyring`` or ``keys.json``), ``None`` when no stored key was put there."""
    if not provider.api_key_env or any(environ.get(var) for var in provider.api_key_env):
        return None
    store = KeyStore(home)
    key = store.get(provider.name)
    if not key:
        return None
    environ[provider.api_key_env[0]] = key
    return KEYS_FILE if store.stored()[provider.name] == FILE else KEYRING


def stored_key_rejected(provider: str, origin: str, status: int) -> str:
    """The line for a key from ``origin`` (``keyring`` or ``keys.json``) that ``provider``
    refused with HTTP ``status``: which key, and how to replace it."""
    where = "in the system keyring" if origin == KEYRING else f"in {KEYS_FILE}"
    return (f"Provider '{provider}' rejected the API key stored {where} by ikigai keys "
            f"(HTTP {status}): replace it with `ikigai keys set {provider}`")

